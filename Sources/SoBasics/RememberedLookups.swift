import Foundation

/// Answers of a slow lookup (the system resolver's), kept for `keep` seconds, asked for many names at once on a
/// thread each: a start renders twice and each render names every egress host, so one name is looked up once per
/// start, and three names cost the slowest lookup, not the sum.
public final class RememberedLookups: @unchecked Sendable {
    private let lookUp: @Sendable (String) -> [String]
    private let keep: Double
    private let lock = NSLock()
    private var known: [String: (addresses: [String], at: UInt64)] = [:]

    public init(keep: Double = 30, lookUp: @escaping @Sendable (String) -> [String]) {
        self.keep = keep
        self.lookUp = lookUp
    }

    public func addresses(of host: String) -> [String] {
        let now = DispatchTime.now().uptimeNanoseconds
        if let kept = fresh(host, now: now) { return kept }
        let found = lookUp(host)
        lock.withLock { known[host] = (found, now) }
        return found
    }

    /// The answer kept for `host` while it is younger than `keep` (one kept by another thread after `now` was read
    /// is as good as new).
    private func fresh(_ host: String, now: UInt64) -> [String]? {
        guard let k = lock.withLock({ known[host] }), Double(now > k.at ? now - k.at : 0) / 1e9 < keep else {
            return nil
        }
        return k.addresses
    }

    public func addresses(of hosts: [String]) -> [String: [String]] {
        let unique = Array(Set(hosts))
        // A thread each only for the names not kept (a start's second render finds them all kept).
        let now = DispatchTime.now().uptimeNanoseconds
        let missing = unique.filter { fresh($0, now: now) == nil }
        if missing.count > 1 {
            let group = DispatchGroup()
            for host in missing {
                group.enter()
                Thread {
                    _ = self.addresses(of: host)
                    group.leave()
                }.start()
            }
            group.wait()
        }
        return Dictionary(uniqueKeysWithValues: unique.map { ($0, addresses(of: $0)) })
    }
}
