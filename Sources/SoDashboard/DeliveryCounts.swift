import Foundation

/// What the webhook's receiver answered since this server started, by outcome: kept in the server's memory only
/// (a restart counts from 0 again), never in the cluster. Names no delivery, only how many.
public struct DeliveryCounts: Sendable, Equatable {
    /// One delivery's outcome: stored (202), stored already (a redelivery, 202), a ping (200), refused with its
    /// status (401 a wrong signature, 403 another repository, 400 malformed or too large, 204 an event not
    /// handled), or not stored because the cluster could not be written (503).
    public enum Outcome: Sendable, Hashable {
        case accepted, duplicate, ping, unstored
        case refused(Int)
    }

    /// When the counting began (the server's start).
    public var since: Date?
    public var counts: [Outcome: Int] = [:]

    public init(since: Date? = nil) { self.since = since }

    public mutating func add(_ outcome: Outcome) { counts[outcome, default: 0] += 1 }

    public subscript(_ outcome: Outcome) -> Int { counts[outcome] ?? 0 }

    /// Every delivery counted.
    public var total: Int { counts.values.reduce(0, +) }
}
