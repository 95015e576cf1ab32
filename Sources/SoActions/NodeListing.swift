import Foundation
import SoBasics
import SoKube

/// The cluster's Nodes as one process listed them a moment ago, per client: a cold `up` asks for them for its agent's
/// image (on the nodes' images) and again to name its new volumes' node, and one list serves both (issue 66: nodes
/// read once per start). A list older than `fresh` seconds is asked for again (a long-lived process sees nodes come
/// and go).
public final class NodeListing: @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [(client: AnyObject, at: Date, list: Task<[JSON]?, Never>)] = []
    public static let fresh = 30.0

    public init() {}

    /// The Nodes `client` lists (nil: not allowed, or no answer), asked once while fresh; `now` by the caller's clock.
    public func nodes(_ client: ClusterClient, now: Date) async -> [JSON]? {
        let key = client as AnyObject
        let list = lock.withLock { () -> Task<[JSON]?, Never> in
            asked.removeAll { now.timeIntervalSince($0.at) >= Self.fresh || now < $0.at }
            if let known = asked.first(where: { $0.client === key }) { return known.list }
            // Not allowed to list nodes, or no answer: nil, which each caller reads as "ask nothing of the nodes".
            let list = Task { try? await client.list(.node, namespace: nil, labelSelector: nil) }
            asked.append((key, now, list))
            return list
        }
        return await list.value
    }
}
