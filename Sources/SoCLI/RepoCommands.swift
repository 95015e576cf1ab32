import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

struct FetchStackCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "fetch-stack",
        abstract: "Clone a repository holding stacks into $SO_REPO_BASE_DIR (else $CERC_REPO_BASE_DIR, else ~/cerc).",
        discussion: """
        An existing checkout is not cloned again; @ref checks out a branch, tag or commit. Prints each stack found and the --stack path to use. With \
        --dry-run nothing is cloned.

        Example:
          so fetch-stack github.com/cerc-io/stack-orchestrator@v1.1.0
          so fetch-stack git.example.org/team/stacks --git-ssh --pull
        """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Repository: [host/]org/repo[@ref].", valueName: "locator")) var locator: String
    @OptionGroup var clone: CloneOptions
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = clone.context(global.context(ctx, dryRun: clone.dry.dryRun))
        let result = try await RepositoryAction(ctx).fetch(try RepoLocator.parse(locator), gitSSH: clone.gitSSH, pull: clone.pull, checkOnly: clone.checkOnly)
        clone.print([result], json: result, ctx: ctx)
    }
}

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
    @Option(name: .long, help: ArgumentHelp("Only these repositories (comma list).", valueName: "repos")) var include: String?
    @Option(name: .long, help: ArgumentHelp("Skip these repositories (comma list).", valueName: "repos")) var exclude: String?
    @Option(name: .long, help: ArgumentHelp("Refs to use instead of the stack's (org/repo@ref, comma list).", valueName: "refs")) var branches: String?
    @OptionGroup var clone: CloneOptions
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = clone.context(global.context(ctx, root: rootOption, dryRun: clone.dry.dryRun))
        let stack = try ctx.locator.resolve(try stackOption.require("setup-repositories"), diagnostics: ctx.diagnostics)
        func list(_ s: String?) -> [String] { s?.commaSeparatedItems ?? [] }
        let results = try await RepositoryAction(ctx).setup(stack: stack, include: list(include), exclude: list(exclude), gitSSH: clone.gitSSH,
                                                             pull: clone.pull, checkOnly: clone.checkOnly, branches: list(branches))
        clone.print(results, json: results, ctx: ctx)
    }
}

/// The options fetch-stack and setup-repositories share: how to clone, what to change, how to print.
struct CloneOptions: ParsableArguments {
    @Flag(name: .long, help: "Clone over SSH (git@host:org/repo).") var gitSSH = false
    @Flag(name: .long, help: "Pull checkouts that are on a branch.") var pull = false
    @Flag(name: .long, help: "Only report; change nothing.") var checkOnly = false
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @OptionGroup var dry: DryRunFlag

    /// Under `-o json` stdout holds the JSON only (as every verb's `OutputFormat.report`): progress lines are quiet.
    func context(_ ctx: SoContext) -> SoContext {
        var ctx = ctx
        if output == .json { ctx.options.quiet = true }
        return ctx
    }

    /// Under `-o json`, `json` (one result or the list, as the verb reports); otherwise each repository with the stacks found in it.
    func print<R: Encodable>(_ results: [FetchResult], json: R, ctx: SoContext) {
        if output == .json { ctx.console.out(JSONOut.encode(json)); return }
        for r in results {
            ctx.say("\(r.repository): \(r.state.rawValue) at \(r.directory)")
            for s in r.stacks { ctx.say("  stack \(s.name): so --stack \(s.path) deploy init --output \(s.name)-spec.yml") }
        }
    }
}
