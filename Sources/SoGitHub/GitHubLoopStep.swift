import Foundation
import SoWorkspace

/// A step of the GitHub loop as its thread records it, so a loop that dies at any line leaves what it did readable:
/// `GitHubLoopThread.step` is saved before the step acts (what it is about to do), and `GitHubLoopThread.last`
/// with the thread's new state once it acted (what became of its deliveries). A pass reconciles the inbox's entries
/// left `taken` from them (`GitHubLoopExecutor.reconcileTaken`). Names and numbers only.
public struct GitHubLoopStep: Sendable, Equatable, Codable {
    /// The inbox's deliveries the step takes.
    public var deliveries: [String]
    /// `start`, `task` or `remove`.
    public var kind: String
    /// A start's progress: `up` until its workspace is made, then `task` (a task may have been queued).
    public var phase: String?
    /// The highest task id of the workspace before the step: a task above it naming the issue is the step's.
    public var after = 0
    /// A task's highest comment, review and review comment ids, the thread's once the task is queued.
    public var lastComment: Int?
    public var lastReview: Int?
    public var lastReviewComment: Int?
    /// The loop that took it (`GitHubLoopEffects.identity`).
    public var by: String
    /// When it was saved: another loop's step older than the config's `lease` is reconciled.
    public var at: Date
    /// In `last`: `done` or `failed`, what its deliveries are marked.
    public var state: String?

    public init(deliveries: [String], kind: String, by: String, at: Date) {
        self.deliveries = deliveries
        self.kind = kind
        self.by = by
        self.at = at
    }
}
