import Foundation
import SoWorkspace

/// A workspace `cleanup --idle` looked at: stopped (or would be, with --dry-run), or kept and why.
struct IdleJSON: Encodable {
    var name, namespace, directory, reason: String
    var stopped: Bool

    init(_ o: IdleAction.Outcome) {
        name = o.listing.name
        namespace = o.listing.namespace
        directory = o.listing.directory
        reason = o.reason
        stopped = o.stopped
    }
}
