import Foundation
import SoGitHub
import SoWorkspace

/// The GitHub loop as the dashboard last read it: the threads (`GitHubLoopStore`: names and numbers only), the
/// inbox's entries counted by state (never read: the API server's table of their names, one state at a time), and
/// the receiver's own counts since the server started (`DeliveryCounts`, from memory).
public struct GitHubView: Sendable, Equatable {
    public var threads: [GitHubLoopThread] = []
    /// Entries by state (`GitHubInbox.states`).
    public var inbox: [String: Int] = [:]
    public var receiver = DeliveryCounts()
    public var readAt: Date?
    /// Why the last read of the loop's state failed.
    public var problem: String?

    public init() {}

    /// Whether a page would show `other` the same (when it was read aside).
    public func showsAs(_ other: GitHubView) -> Bool {
        threads == other.threads && inbox == other.inbox && receiver == other.receiver && problem == other.problem
    }
}
