import Foundation
import SoBasics

extension GitHubLoopExecutor {
    /// The entries a loop looked up among the taken digests and found new (a pending entry is looked up once: a
    /// digest is kept only when its own entry is pruned, and a pending entry is never pruned).
    final class Checked: @unchecked Sendable {
        private let lock = NSLock()
        private var names: Set<String> = []
        func contains(_ name: String) -> Bool { lock.withLock { names.contains(name) } }
        func insert(_ name: String) {
            lock.withLock {
                // Bounded: forgotten, an entry is looked up again.
                if names.count >= 50_000 { names.removeAll() }
                names.insert(name)
            }
        }
    }

    /// An event whose own time (`GitHubEvent.eventTime`) is this long before its entry was received is a replay of
    /// an old body: `keep-days`, and at least 7 days (GitHub redelivers a failed delivery up to 3 days on).
    var staleAfter: TimeInterval { Double(max(config.keepDays, 7)) * 86_400 }

    /// `pending` without the replays: an entry whose signed body was taken before and pruned (its digest among the
    /// taken digests) or whose event's own time is `staleAfter` before it was received is marked `done` and said,
    /// never planned. The digests are read only when an entry not looked up yet has one; when they cannot be read,
    /// those entries wait for the next pass (a replay is never let through for want of the list).
    func unreplayed(_ pending: [GitHubInbox.Entry], now: Date) async -> [GitHubInbox.Entry] {
        let unchecked = pending.filter { $0.digest != nil && !checked.contains($0.secretName) }
        var taken: GitHubTakenDigests?
        if !unchecked.isEmpty {
            do { taken = try await effects.takenDigests() } catch {
                say(
                    "github: the taken digests cannot be read, \(unchecked.count) new deliveries wait: "
                        + Self.oneLine(error))
            }
        }
        var kept: [GitHubInbox.Entry] = []
        for e in pending {
            let at = "github: \(e.event.repository)#\(e.event.number)"
            if let why = replayed(e, taken) {
                // best effort: one left pending is refused again next pass
                _ = try? await effects.mark(e, state: "done")
                say("\(at): ignore: \(why) (delivery \(e.event.delivery))")
                continue
            }
            if e.digest != nil, !checked.contains(e.secretName) {
                guard taken != nil else { continue }  // waits: the digests were not read
                checked.insert(e.secretName)
            }
            kept.append(e)
        }
        return kept
    }

    /// Why `e` is a replay, or nil.
    func replayed(_ e: GitHubInbox.Entry, _ taken: GitHubTakenDigests?) -> String? {
        if let d = e.digest, taken?.contains(d) == true {
            return "a replay: its signed body was taken before (its digest is kept)"
        }
        if let t = e.event.eventTime, let received = e.receivedAt,
            received.timeIntervalSince1970 - Double(t) > staleAfter
        {
            let days = Int((received.timeIntervalSince1970 - Double(t)) / 86_400)
            return "a replay: its event is from \(days) days before it was received"
        }
        return nil
    }
}
