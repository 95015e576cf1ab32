import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct DeploymentTasksLogsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print a task's log (the agent's output); -f follows it until the task ends.",
        discussion: """
            Leaving -f (Ctrl-C) leaves the task running.

            Example:
              so deployment --name fix-login tasks logs 1
              so deployment --name fix-login tasks logs 1 -f
            """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var task: TaskID
    @Flag(name: [.customShort("f"), .long], help: "Follow the log until the task ends.") var follow = false

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        _ = try await TaskQueueAction(ctx, forge: GitHubTaskForge()).logs(
            try await target.dir(ctx), cluster: target.options(), id: task.id, follow: follow)
    }
}
