import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct SetupRepositoriesCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "setup-repositories",
        abstract: "Clone the repositories a stack's repos: names.",
        discussion: """
            --include and --exclude take comma lists matched against org/repo or host/org/repo; --branches org/repo@branch,… overrides refs.

            Example:
              so --stack ~/cerc/stacks/stack-orchestrator/stacks/web setup-repositories
              so --stack web setup-repositories --include acme/api --pull
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("Only these repositories (comma list).", valueName: "repos")) var include:
        String?
    @Option(name: .long, help: ArgumentHelp("Skip these repositories (comma list).", valueName: "repos")) var exclude:
        String?
    @Option(
        name: .long,
        help: ArgumentHelp("Refs to use instead of the stack's (org/repo@ref, comma list).", valueName: "refs"))
    var branches: String?
    @OptionGroup var clone: CloneOptions
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = clone.context(global.context(ctx, root: rootOption, dryRun: clone.dry.dryRun))
        let stack = try ctx.locator.resolve(try stackOption.require("setup-repositories"), diagnostics: ctx.diagnostics)
        func list(_ s: String?) -> [String] { s?.commaSeparatedItems ?? [] }
        let results = try await RepositoryAction(ctx).setup(
            stack: stack, include: list(include), exclude: list(exclude), gitSSH: clone.gitSSH,
            pull: clone.pull, checkOnly: clone.checkOnly, branches: list(branches))
        clone.print(results, json: results, ctx: ctx)
    }
}
