import Foundation
import SoBasics
import SoGitHub
import SoKube
import SoWorkspace

extension DashboardFeed {
    /// Reads the GitHub loop's state every 2 s while a GitHub page is open, every 30 s otherwise, and at once when a
    /// page opens or a delivery was stored. The cluster's watches do not see it (it lives in `so-github`, as
    /// ConfigMaps and Secrets), so it is read on its own clock: two lists, never a Secret's data.
    func githubLoop() async {
        while !Task.isCancelled {
            let age = ctx.clock.now().timeIntervalSince(snapshot.github.readAt ?? .distantPast)
            if githubStale || age >= (githubPages > 0 ? 2 : 30) {
                githubStale = false
                await readGitHub()
            }
            try? await Task.sleep(for: .seconds(0.5))  // cancelled: the loop ends
        }
    }

    /// Reads the loop's threads (`GitHubLoopStore`) and counts the inbox's entries by state, in one list of their
    /// metadata (`PartialObjectMetadataList`): no entry's data, hence no issue's text, is read.
    public func readGitHub() async {
        var threads: [GitHubLoopThread]?
        var inbox = Dictionary(uniqueKeysWithValues: GitHubInbox.states.map { ($0, 0) })
        var problem: String?
        do {
            threads = try await GitHubLoopStore(client: client).all().map(\.thread)
            try await client.forEachLabelsPage(
                .secret, namespace: GitHubInbox.namespace, labelSelector: "\(GitHubInbox.label)=event"
            ) { page in
                for labels in page {
                    if let state = labels[GitHubInbox.stateLabel], let n = inbox[state] { inbox[state] = n + 1 }
                }
            }
        } catch {
            problem = "\(error)".replacingOccurrences(of: "\n", with: " ")
        }
        // The snapshot as it is now (deliveries counted while this read waited are kept), with what was read.
        var next = snapshot
        if let threads, problem == nil {
            next.github.threads = threads
            next.github.inbox = inbox
        }
        next.github.problem = problem
        next.github.readAt = ctx.clock.now()
        publish(next)
    }

    /// A GitHub page opened (true) or closed (false): while one is open the loop's state is read every 2 s.
    public func watchGitHub(_ open: Bool) {
        githubPages = max(0, githubPages + (open ? 1 : -1))
        if open { githubStale = true }
    }

    /// The webhook answered a delivery: counted (open pages hear a new version), and the inbox read again when one
    /// was stored.
    public func count(_ outcome: DeliveryCounts.Outcome) {
        var next = snapshot
        next.github.receiver.add(outcome)
        if outcome == .accepted { githubStale = true }
        publish(next)
    }
}
