import Foundation

/// The digests of the signed bodies whose entries the loop pruned from the inbox (`keep-days` after they ended), with
/// when each was taken: the same body sent again later (a replay under a new `X-GitHub-Delivery`; GitHub signs no
/// time) is refused when a pass would take it, as one the inbox still holds is (issue 64, item 5). One ConfigMap,
/// `so.github.taken-digests` in `so-github` (digests only: no text of an issue), its `digests` key a line per
/// digest, `SHA256HEX UNIXSECONDS`, oldest first. At most `bound` digests: past it the oldest taken go first.
/// Foundation only (`Benchmarks/github_replay_bench.py` builds it alone); the cluster's side is `GitHubInbox`'s.
public struct GitHubTakenDigests: Sendable, Equatable {
    public static let configMapName = "so.github.taken-digests"
    static let dataKey = "digests"
    static let label = "so.dev/github-loop"
    /// A line is 76 bytes: 12,000 of them are 0.9 MB, under the 1 MiB a ConfigMap holds. At 100 deliveries a day
    /// the loop takes, a replay is refused for 120 days past `keep-days`; past that, by the event's own time
    /// (`GitHubEvent.eventTime`, `GitHubLoopExecutor.staleAfter`).
    public static let bound = 12_000

    /// The lines as the ConfigMap holds them (`DIGEST SECONDS`, oldest first): as read, and after each `add`.
    public private(set) var text: String
    /// The ConfigMap's resourceVersion as read (nil: there is none yet).
    public var resourceVersion: String?

    public init(text: String = "", resourceVersion: String? = nil) {
        self.text = text
        self.resourceVersion = resourceVersion
    }

    /// Digest (64 lowercase hex digits) → when its entry was taken (Unix seconds).
    public var taken: [String: Int64] { Self.parse(text) }

    /// Whether `digest` is kept: a look at each line's first bytes, as read (a delivery's look-up; reading all of
    /// them into a dictionary first took 34 ms, 200 ms in a debug build).
    public func contains(_ digest: String) -> Bool {
        let d = Array(digest.lowercased().utf8)
        guard d.count == 64 else { return false }
        var lines = text
        return lines.withUTF8 { b in
            var start = 0
            while start + 64 < b.count {
                var i = 0
                while i < 64, b[start + i] == d[i] { i += 1 }
                if i == 64, b[start + 64] == 0x20 { return true }
                // The next line: past what matched (hex digits, no newline), then its newline.
                var end = start + i
                while end < b.count, b[end] != 0x0a { end += 1 }
                start = end + 1
            }
            return false
        }
    }

    /// `digests` kept as taken when said (the earlier time for one kept already), then the oldest dropped past
    /// `bound`.
    public mutating func add(_ digests: [(digest: String, at: Date)], bound: Int = bound) {
        var taken = self.taken
        for (digest, at) in digests {
            let d = digest.lowercased()
            guard Self.isDigest(d) else { continue }
            let t = Int64(at.timeIntervalSince1970.rounded(.down))
            taken[d] = min(taken[d] ?? t, t)
        }
        var lines = Self.ordered(taken)
        if lines.count > bound { lines.removeFirst(lines.count - bound) }
        text = lines.map { "\($0.0) \($0.1)\n" }.joined()
    }

    static func isDigest(_ s: String) -> Bool { s.utf8.count == 64 && s.utf8.allSatisfy { Self.hex.contains($0) } }
    static let hex = Set("0123456789abcdef".utf8)

    /// Oldest first (then by digest): the order of the lines and of dropping.
    static func ordered(_ taken: [String: Int64]) -> [(String, Int64)] {
        taken.map { ($0.key, $0.value) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    }

    /// What `text` held: a line of a digest, a space and anything else is that digest (taken at its time, 0 when
    /// it is not one: the oldest), as `contains` reads it; any other line is left out. Read as bytes (a full list is
    /// 0.9 MB: Character by Character it took a second).
    static func parse(_ text: String) -> [String: Int64] {
        var out: [String: Int64] = [:]
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0a { end += 1 }
            if end - start > 64, bytes[start + 64] == 0x20,
                bytes[start..<(start + 64)].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            {
                // SECONDS: 1 to 18 decimal digits.
                let time = bytes[(start + 65)..<end]
                var t: Int64 = 0
                if (1...18).contains(time.count), time.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                    for b in time { t = t * 10 + Int64(b - 0x30) }
                }
                out[String(decoding: bytes[start..<(start + 64)], as: UTF8.self)] = t
            }
            start = end + 1
        }
        return out
    }
}
