import Foundation

/// Wrong tokens per client: after `free` of them, each next try waits twice as long as the last (1 s, 2 s, …,
/// at most `longest`), refused meanwhile without a look at what it holds; a right token clears the count.
actor Throttle {
    static let free = 5
    static let longest: Double = 300
    var failures: [String: (count: Int, last: Date)] = [:]

    /// Nil: the client may try now; else how many seconds until it may.
    func wait(_ client: String, at now: Date) -> Int? {
        guard let f = failures[client], f.count >= Self.free else { return nil }
        let pause = min(Self.longest, pow(2, Double(f.count - Self.free)))
        let left = f.last.addingTimeInterval(pause).timeIntervalSince(now)
        return left > 0 ? Int(left.rounded(.up)) : nil
    }

    func failed(_ client: String, at now: Date) {
        if failures.count > 10_000 {
            failures = failures.filter { now.timeIntervalSince($0.value.last) < Self.longest }
            if failures.count > 10_000 { failures = [:] }
        }
        failures[client] = ((failures[client]?.count ?? 0) + 1, now)
    }

    func succeeded(_ client: String) { failures[client] = nil }
}
