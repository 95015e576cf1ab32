import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentFetchCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Bring a workspace's branch into your local clone as a branch (no push needed).",
        discussion: """
            The clone is the git repository the current directory is in (or --into DIR). The branch arrives under the same name (or --branch); merge it as you \
            would any branch. Afterwards 'so down' counts those commits as saved.

            Example:
              so deployment --name fix-login fetch
              git merge agent/fix-login
              so deployment --name fix-login fetch --into ~/src/web --branch review/fix-login
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @Option(
        name: .long,
        help: ArgumentHelp("Local branch name (default: the workspace's branch name).", valueName: "branch"))
    var branch: String?
    @Flag(name: .long, help: "Replace the local branch even when it has commits the workspace does not.") var force =
        false
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceGitAction(ctx).fetch(
                target.dir(ctx), cluster: target.options(), into: local.into, localBranch: branch, force: force)
        } text: { r in
            [
                "fetched \(r.branch) (\(r.commit.prefix(12)), \(r.commits) \(English.plural("commit", r.commits)) since the start) into \(r.repository)",
                "  merge: git -C \(r.repository) merge \(r.branch)",
            ]
        }
    }
}
