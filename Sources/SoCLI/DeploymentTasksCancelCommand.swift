import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct DeploymentTasksCancelCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a queued task, or stop a running one; what it committed stays.",
        discussion: """
            A running task's agent gets TERM (its whole process group), then KILL after 10 s. What it left uncommitted is \
            committed on its branch, as for any task.

            Example:
              so deployment --name fix-login tasks cancel 2
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
        let t = try await TaskQueueAction(ctx, forge: GitHubTaskForge()).cancel(
            dir, cluster: target.options(), id: task.id)
        let name = Path.basename(dir)
        if format.value == .json {
            TaskText.print(t, workspace: name, json: true, ctx)
        } else {
            let n = t.commits.count
            let kept = n == 0 ? "" : ", \(n) \(English.plural("commit", n)) kept on \(t.branch ?? "its branch")"
            ctx.console.out("task \(t.id) in \(name): \(TaskText.state(t))\(kept)")
        }
    }
}
