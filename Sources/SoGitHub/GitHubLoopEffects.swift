import Foundation
import SoBasics
import SoWorkspace

/// What a pass of the GitHub loop (`GitHubLoopExecutor`) does to the world, one call each: the inbox, the threads'
/// store, the workspace actions and GitHub. The live one is `GitHubLoopLive`; tests give fakes.
public protocol GitHubLoopEffects: Sendable {
    /// Who this loop is (host, process and a nonce): written on the entries it takes, so a pass tells its own
    /// entries (none of its steps is under way between passes) from another loop's.
    var identity: String { get }
    /// The inbox's entries in `state`, oldest first.
    func entries(state: String) async throws -> [GitHubInbox.Entry]
    func threads() async throws -> [GitHubLoopStore.Stored]
    /// The entry marked `state` if still as read (a compare-and-swap): the entry as it now is, or nil when another
    /// loop changed it meanwhile. The mark's time is kept on the entry (`markedAt`), and `taken` says by whom.
    func mark(_ entry: GitHubInbox.Entry, state: String) async throws -> GitHubInbox.Entry?
    /// `GitHubLoopStore.saved`: the thread as stored, or nil when another loop changed it meanwhile.
    func save(_ thread: GitHubLoopThread, over: GitHubLoopStore.Stored?) async throws -> GitHubLoopStore.Stored?
    /// `so up` of the issue's workspace (the config's stack, agent and settings; the repository's clone). With
    /// `carried` (a private repository: the workspace, which holds no token, cannot clone it) the loop checks the
    /// repository out with its own token and the workspace gets it as a git bundle (`GitHubCheckout`).
    func up(workspace: String, repository: String, carried: Bool) async throws
    /// A detached task of `text` in the workspace, with `--issue`, and `--pr` when `pullRequest` (the thread has
    /// none yet: a task on a pull request's review pushes to its branch, and one whose pull request was closed
    /// meanwhile opens no other): its id.
    func task(workspace: String, text: String, title: String?, pullRequest: Bool, issue: GitHubIssue) async throws
        -> Int
    /// `so down` of the workspace, of `repository`'s issue. What it holds that its origin does not (commits not
    /// pushed, changes not committed) is pushed first, by the loop, to a branch of its own, returned; nil when there
    /// was nothing to keep. Refused (the workspace left as it is) when that work can be neither read nor pushed.
    func down(workspace: String, repository: String) async throws -> String?
    /// What the workspace's tasks are at: whether one is queued or runs, the pull request and branch, the cost, and
    /// each task's state, commits and cost. A task that ended with commits is pushed by the loop first (the
    /// workspace holds no token), and its pull request opened when it asked for one.
    func work(workspace: String, repository: String) async throws -> GitHubLoopWork
    /// The last lines of a task's log (`GitHubLoopReport.logLines`), every value of the workspace's Secret and the
    /// loop's GitHub token replaced.
    func logTail(workspace: String, task: Int) async throws -> String
    /// Whether the cluster holds the workspace's record (a `down` that ran leaves none).
    func exists(workspace: String) async throws -> Bool
    /// The entry deleted if still as read (pruning): false when it was gone or changed.
    func delete(_ entry: GitHubInbox.Entry) async throws -> Bool
    /// The digests of the signed bodies taken and pruned (`GitHubTakenDigests`): a body sent again is refused.
    func takenDigests() async throws -> GitHubTakenDigests
    /// `digests` (with when each was taken) kept among them: before their entries are pruned.
    func remember(_ digests: [(digest: String, at: Date)]) async throws
    func comment(_ issue: GitHubIssue, _ body: String) async throws
    /// A reply in the thread of the pull request's review comment `comment`.
    func reply(_ pull: GitHubIssue, comment: Int, _ body: String) async throws
    /// A 👀 reaction to the comment `comment`, or to the issue itself when nil.
    func react(_ issue: GitHubIssue, comment: Int?) async throws
    /// What `login` may do in `repository` (GitHub's collaborator permission); throws when GitHub does not say.
    func permission(repository: String, login: String) async throws -> GitHubPermission
    /// A 👀 reaction to the pull request's review comment `comment` (an inline comment on its code).
    func reactOnCode(_ pull: GitHubIssue, comment: Int) async throws
}
