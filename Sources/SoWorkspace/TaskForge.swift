import Foundation
import SoActions

/// Where the issue and the pull request of a task live (`--issue OWNER/REPO#N`, `--pr`): GitHub's REST API, which
/// the caller gives as SoGitHub's `GitHubTaskForge` (the CLI, the dashboard and the loop do); SoWorkspace names no
/// forge. With none (`NoTaskForge`, the default), a task asking for either is refused before it is queued, and
/// the comment and pull request of a task another `so` queued are left, unclaimed, to a `so` that has one.
public protocol TaskForge: Sendable {
    /// Whether this forge comments and opens pull requests (false: the end of a task is left unclaimed).
    var serves: Bool { get }
    /// Refuses a task asking for an issue comment or a pull request that cannot be made (no token), before
    /// anything runs.
    func check(_ ctx: SoContext) throws
    /// Comments on `issue` (OWNER/REPO#N), warning instead of failing: a comment never changes what happened.
    func comment(on issue: String, _ body: String, _ ctx: SoContext) async
    /// The pull request of `head` into `base` in the repository of the remote `origin`, opened, or found when one
    /// is open: its URL.
    func openPullRequest(origin: String, head: String, base: String, title: String, body: String, _ ctx: SoContext)
        async throws -> String
}
