import Foundation
import SoWorkspace

/// A workspace's tasks as the loop reads them to learn that a task ended, and what to say of it.
public struct GitHubLoopWork: Sendable, Equatable {
    /// One task, as its report says (`TaskRecord`).
    public struct Task: Sendable, Equatable {
        public var id: Int
        /// queued, running, succeeded, failed or cancelled
        public var state: String
        public var exitCode: Int?
        public var commits: [TaskRecord.Commit]
        /// The agent's cost in its words (`TaskCost.text`), nil when it reported none.
        public var cost: String?
        public var pullRequest: String?
        /// The issue it names (OWNER/NAME#N lowercased; empty for none): a step that died is seen to have queued it.
        public var issue: String
        public init(
            id: Int, state: String, exitCode: Int? = nil, commits: [TaskRecord.Commit] = [], cost: String? = nil,
            pullRequest: String? = nil, issue: String = ""
        ) {
            self.id = id
            self.state = state
            self.exitCode = exitCode
            self.commits = commits
            self.cost = cost
            self.pullRequest = pullRequest
            self.issue = issue
        }
        public var ended: Bool { ["succeeded", "failed", "cancelled"].contains(state) }
    }

    public var running: Bool
    public var pullRequest: Int?
    public var branch: String?
    /// Dollars, all its tasks.
    public var cost: Double
    /// Each task, oldest first.
    public var tasks: [Task]
    public init(
        running: Bool, pullRequest: Int? = nil, branch: String? = nil, cost: Double = 0, tasks: [Task] = []
    ) {
        self.running = running
        self.pullRequest = pullRequest
        self.branch = branch
        self.cost = cost
        self.tasks = tasks
    }
}
