import Foundation
import SoBasics
import SoGitHub

/// The receiver's one way into the inbox: a delivery at a time, so the bound on pending entries holds against a
/// flood (each count is followed by its write before the next count). A delivery whose body is stored already is a
/// duplicate, full or not; a new one past the bound is not written (the receiver answers 503, and GitHub may
/// deliver it again).
actor GitHubInboxGate {
    let inbox: GitHubInbox
    /// The most pending entries the inbox holds.
    let bound: Int
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(inbox: GitHubInbox, bound: Int) {
        self.inbox = inbox
        self.bound = bound
    }

    enum Outcome: Equatable {
        case stored
        case duplicate
        /// Not written: the inbox holds this many pending entries.
        case full(Int)
    }

    func store(_ event: GitHubEvent, at: Date, digest: String) async throws -> Outcome {
        await enter()
        defer { leave() }
        let pending = try await inbox.pendingCount()
        if pending >= bound {
            return try await inbox.holds(GitHubInbox.bodyName(digest)) ? .duplicate : .full(pending)
        }
        return try await inbox.record(event, at: at, digest: digest) ? .stored : .duplicate
    }

    /// One delivery at a time (an actor's method lets another in at each `await`; this does not).
    private func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
