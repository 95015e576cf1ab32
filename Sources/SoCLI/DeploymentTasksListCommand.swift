import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct DeploymentTasksListCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List a workspace's tasks, with their state and cost (the default of 'tasks').",
        discussion: """
            Example:
              so deployment --name fix-login tasks
              so deployment --name fix-login tasks list -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        let dir = try await target.dir(ctx)
        let name = Path.basename(dir)
        let tasks = try await TaskQueueAction(ctx, forge: GitHubTaskForge()).list(dir, cluster: target.options())
        let total = TaskCost.total(tasks.map(\.cost))
        if format.value == .json {
            ctx.console.out(
                JSONOut.encode(
                    TaskListJSON(
                        workspace: name, tasks: tasks.map { TaskJSON($0, workspace: name) }, cost: .init(total))))
            return
        }
        guard !tasks.isEmpty else {
            ctx.console.out("\(name) has no tasks; give one: so deployment \(target.address) task --detach \"TEXT\"")
            return
        }
        let rows =
            [["ID", "STATE", "QUEUED", "TOOK", "COMMITS", "COST", "TASK"]]
            + tasks.map { t in
                [
                    String(t.id), TaskText.state(t), TaskText.when(t.queuedAt, ctx), TaskText.took(t, ctx),
                    t.ended ? String(t.commits.count) : "-", t.cost.reported ? t.cost.text : "-", t.title,
                ]
            }
        for line in TextTable.lines(rows) { ctx.console.out(line) }
        if total.reported { ctx.console.out("total cost: \(total.text)") }
    }
}
