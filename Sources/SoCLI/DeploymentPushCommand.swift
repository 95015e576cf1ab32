import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentPushCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push a workspace's branch to its origin (with the workspace's git token).",
        discussion: """
            Pushes the branch the workspace is on (agent/NAME unless WORKSPACE_BRANCH chose another) to the branch of \
            the same name on origin. With -m, what is \
            not committed is committed first.

            Example:
              so deployment --name fix-login push
              so deployment --name fix-login push -m "work in progress"
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Commit what is not committed with this message first.", valueName: "message")) var message:
        String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceGitAction(ctx).push(target.dir(ctx), cluster: target.options(), message: message)
        } text: { r in
            [
                "pushed \(r.branch) (\(r.commit.prefix(12)), \(r.commits) \(English.plural("commit", r.commits)) since the start) to \(r.origin)"
            ]
        }
    }
}
