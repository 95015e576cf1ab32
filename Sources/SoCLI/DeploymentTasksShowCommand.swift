import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct DeploymentTasksShowCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a task's report: state, times, exit code, step, progress, files, commits, branch and cost.",
        discussion: """
            Example:
              so deployment --name fix-login tasks show 1
              so deployment --name fix-login tasks show 1 -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var task: TaskID
    @OptionGroup var format: Formatted<OutputFormat>

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        let dir = try await target.dir(ctx)
        let t = try await TaskQueueAction(ctx, forge: GitHubTaskForge()).show(
            dir, cluster: target.options(), id: task.id)
        TaskText.print(t, workspace: Path.basename(dir), json: format.value == .json, ctx)
    }
}
