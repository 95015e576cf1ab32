import Foundation
import SoBasics
import SoWorkspace

/// The JSON shape of a task's report (`tasks -o json`, `tasks show ID -o json`).
struct TaskJSON: Encodable {
    struct Step: Encodable {
        var time: String?
        var text: String
    }
    struct Cost: Encodable {
        var reported: Bool
        var inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens: Int?
        /// US dollars as the agent CLI reported them (a decimal string of at most 6 places: so's JSON holds whole
        /// numbers only).
        var usd: String?
        var problem: String?
        init(_ c: TaskCost) {
            reported = c.reported
            inputTokens = c.inputTokens
            outputTokens = c.outputTokens
            cacheReadTokens = c.cacheReadTokens
            cacheWriteTokens = c.cacheWriteTokens
            usd = c.usd.map(TaskCost.decimal)
            problem = c.problem
        }
    }
    var id: Int
    var workspace, text, command, state: String
    var queued, started, ended: String?
    var exitCode: Int?
    var step: String?
    var progress: [Step]
    var base, branch, pushed, pullRequest: String?
    var commits: [TaskRecord.Commit]
    var files: [TaskRecord.File]
    var cost: Cost
    var problems: [String]

    init(_ t: TaskRecord, workspace: String) {
        id = t.id
        self.workspace = workspace
        text = t.text
        command = t.command
        state = t.state
        queued = t.queuedAt.map(Timestamps.rfc3339)
        started = t.startedAt.map(Timestamps.rfc3339)
        ended = t.endedAt.map(Timestamps.rfc3339)
        exitCode = t.exitCode
        step = t.step
        progress = t.progress.map { Step(time: $0.time.map(Timestamps.rfc3339), text: $0.text) }
        base = t.base
        branch = t.branch
        pushed = t.pushed
        pullRequest = t.pullRequest
        commits = t.commits
        files = t.files
        cost = Cost(t.cost)
        problems = t.problems
    }
}
