import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

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
        let result = try await RepositoryAction(ctx).fetch(
            try RepoLocator.parse(locator), gitSSH: clone.gitSSH, pull: clone.pull, checkOnly: clone.checkOnly)
        clone.print([result], json: result, ctx: ctx)
    }
}
