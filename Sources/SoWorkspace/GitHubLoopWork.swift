import Foundation

/// A workspace's tasks as the loop reads them to learn that a task ended.
public struct GitHubLoopWork: Sendable, Equatable {
    public var running: Bool
    public var pullRequest: Int?
    public var branch: String?
    /// Dollars, all its tasks.
    public var cost: Double
    /// Each task's id and the issue it names (OWNER/NAME#N lowercased; empty for none): a step that died is seen
    /// to have queued its task.
    public var tasks: [Int: String]
    public init(
        running: Bool, pullRequest: Int? = nil, branch: String? = nil, cost: Double = 0, tasks: [Int: String] = [:]
    ) {
        self.running = running
        self.pullRequest = pullRequest
        self.branch = branch
        self.cost = cost
        self.tasks = tasks
    }
}
