import Foundation
import SoBasics

/// One issue the GitHub loop works on: its workspace, the pull request its tasks opened, whether a task of it is
/// under way and what it has spent. Kept by the loop in the cluster (`GitHubLoopStore`), read by the planner.
public struct GitHubLoopThread: Sendable, Equatable, Codable {
    /// OWNER/NAME, as the event that made it spelled it.
    public var repository: String
    public var issue: Int
    public var workspace: String
    /// The pull request the first task opened (its comments, reviews and close come here).
    public var pullRequest: Int?
    /// The branch the workspace pushes to (a pull request's head ref names the thread too).
    public var branch: String?
    /// A task was handed to the workspace and has not ended: the next events wait.
    public var running = false
    /// Tasks run (the first included), dollars reported, and when the first began: the budget's measures.
    public var tasks = 0
    public var cost = 0.0
    public var startedAt: Date?
    /// The workspace was removed (its pull request closed): later events are not for it.
    public var removed = false
    /// The highest comment and review ids a task took: one delivered again never runs twice.
    public var lastComment = 0
    public var lastReview = 0
    /// The highest review comment id a task took (their ids are not issue comments'). Optional, as every field
    /// added after the first threads were stored: a thread saved before reads as none.
    public var lastReviewComment: Int?
    /// The ids of the tasks the loop gave the workspace, and those whose outcome it commented (or tried to: at most
    /// once, see `GitHubLoopExecutor.reconcile`).
    public var taskIDs: [Int]?
    public var reported: [Int]?
    /// The review comments each task took, answered in their threads when it ends.
    public var replies: [GitHubLoopReplies]?
    /// Whether the repository is private, as the label's delivery said: a failed task's log tail is posted only
    /// there (or with the config's `post-logs: true`); nil (not said, or a thread saved before) counts as public.
    public var privateRepository: Bool?
    /// The step under way, saved before it acts; nil when none is (`GitHubLoopStep`).
    public var step: GitHubLoopStep?
    /// The last step that acted, with what its deliveries were marked.
    public var last: GitHubLoopStep?
    /// The id of the last task queued by the loop in the workspace: the last of `taskIDs` (not stored apart, so the
    /// two never disagree).
    public var lastTask: Int? { taskIDs?.last }

    public init(repository: String, issue: Int, workspace: String) {
        self.repository = repository
        self.issue = issue
        self.workspace = workspace
    }

    /// Whether an event of `repository`'s issue or pull request `number` is this thread's: by number alone (a pull
    /// request's branch is named by whoever opens it, from a fork too).
    public func holds(_ repository: String, number: Int, isPullRequest: Bool) -> Bool {
        guard repository.lowercased() == self.repository.lowercased() else { return false }
        return number == (isPullRequest ? pullRequest : issue)
    }

    /// The workspace of `repository`'s issue `issue`: `gh-NAME-N-HASH`, NAME the repository's name cut to 14 of
    /// `a-z 0-9 -`, HASH 6 hex digits of the lowercased OWNER/NAME (two owners' `web#5` differ): a valid name.
    public static func workspaceName(_ repository: String, issue: Int) -> String {
        let lower = repository.lowercased()
        let name = lower.split(separator: "/").last.map(String.init) ?? lower
        var short = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" })
        while short.contains("--") { short = short.replacingOccurrences(of: "--", with: "-") }
        short = String(short.trimmingCharacters(in: CharacterSet(charactersIn: "-")).prefix(14))
        short = short.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        let hash = String(SHA256.hex(Array(lower.utf8)).prefix(6))
        return "gh-" + (short.isEmpty ? "" : short + "-") + "\(issue)-\(hash)"
    }
}
