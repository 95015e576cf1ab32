import Foundation
import SoBasics
import SoGitHub
import SoWorkspace

/// `so github inbox`: each delivery as a row or as JSON. Pure; no text from an issue, comment or review is shown, and
/// every name is one `GitHubEvent` checked against GitHub's character sets (the sender's login, the repository).
enum GitHubInboxText {
    static let states = GitHubInbox.states

    struct EntryJSON: Encodable {
        var delivery: String
        var receivedAt: String?
        var repository: String
        var number: Int
        var pullRequest: Bool
        var event: String
        var action: String
        var state: String
        var sender: String
        /// When it got its state, and the loop that took it (a `taken` one): what a reconcile reads.
        var markedAt: String?
        var takenBy: String?
    }

    static func json(_ e: GitHubInbox.Entry) -> EntryJSON {
        EntryJSON(
            delivery: e.event.delivery, receivedAt: e.receivedAt.map(Timestamps.microTime),
            repository: e.event.repository, number: e.event.number, pullRequest: e.event.isPullRequest,
            event: e.event.event, action: e.event.action, state: e.state, sender: e.event.sender,
            markedAt: e.markedAt.map(Timestamps.microTime), takenBy: e.takenBy)
    }

    static func lines(_ entries: [GitHubInbox.Entry], json asJSON: Bool) -> [String] {
        if asJSON { return [JSONOut.encode(entries.map(json))] }
        guard !entries.isEmpty else {
            return [
                "no deliveries in the inbox (namespace so-github); so dashboard --github-repo OWNER/NAME takes them"
            ]
        }
        let rows = entries.map { e -> [String] in
            let what = e.event.action.isEmpty ? e.event.event : "\(e.event.event)/\(e.event.action)"
            return [
                e.event.delivery, e.receivedAt.map(Timestamps.rfc3339) ?? "-",
                "\(e.event.repository)#\(e.event.number)", what,
                e.state.isEmpty ? "-" : e.state, e.event.sender,
            ]
        }
        return TextTable.lines([["DELIVERY", "RECEIVED", "ISSUE", "EVENT", "STATE", "SENDER"]] + rows)
    }
}
