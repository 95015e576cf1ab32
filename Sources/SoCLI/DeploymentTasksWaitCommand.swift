import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct DeploymentTasksWaitCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait for a task to end, then exit with its exit code (for CI); -f prints its log meanwhile.",
        discussion: """
            A task cancelled, or failed without an exit code (its container stopped), exits 1. Leaving the wait (Ctrl-C) \
            leaves the task running.

            Example:
              so deployment --name fix-login tasks wait 1
              so deployment --name fix-login tasks wait 1 -f
              so deployment --name fix-login tasks wait 1 -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var task: TaskID
    @Flag(name: [.customShort("f"), .long], help: "Print the task's log as it grows while waiting.") var follow = false
    @OptionGroup var format: Formatted<OutputFormat>

    func validate() throws {
        if follow && format.value == .json {
            throw ValidationError("-f prints the log, -o json the report: choose one")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        let dir = try await target.dir(ctx)
        let t = try await TaskQueueAction(ctx, forge: GitHubTaskForge()).wait(
            dir, cluster: target.options(), id: task.id, follow: follow)
        let name = Path.basename(dir)
        if format.value == .json {
            TaskText.print(t, workspace: name, json: true, ctx)
        } else {
            ctx.say(
                "task \(t.id) in \(name) \(TaskText.state(t)); its report: so deployment \(target.address) tasks show \(t.id)"
            )
        }
        let code = t.state == "succeeded" ? 0 : Int32(clamping: t.exitCode.map { $0 == 0 ? 1 : $0 } ?? 1)
        if code != 0 { throw ExitCode(code) }
    }
}
