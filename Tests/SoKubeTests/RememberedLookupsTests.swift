import Foundation
import SoBasics
import Testing

/// A start renders twice and each render names every egress host: each name is looked up once, and many names at
/// once.
@Suite struct RememberedLookupsTests {
    /// Counts lookups and the most that ran at the same moment.
    final class Counter: @unchecked Sendable {
        let lock = NSLock()
        var asked: [String] = []
        var running = 0
        var most = 0
        func lookUp(_ host: String) -> [String] {
            lock.withLock {
                asked.append(host)
                running += 1
                most = max(most, running)
            }
            // Slow as a lookup the DNS server answers late: every thread is under way before the first ends.
            Thread.sleep(forTimeInterval: 0.2)
            lock.withLock { running -= 1 }
            return host == "nowhere.invalid" ? [] : ["192.0.2.\(host.count)"]
        }
    }

    @Test func eachNameIsLookedUpOnceAndManyAtOnce() {
        let counter = Counter()
        let lookups = RememberedLookups { counter.lookUp($0) }
        let hosts = ["github.com", "api.github.com", "nowhere.invalid", "github.com"]
        let first = lookups.addresses(of: hosts)
        #expect(first == ["github.com": ["192.0.2.10"], "api.github.com": ["192.0.2.14"], "nowhere.invalid": []])
        #expect(counter.most == 3)
        // The second render, and a single name: from what is kept.
        #expect(lookups.addresses(of: hosts) == first)
        #expect(lookups.addresses(of: "api.github.com") == ["192.0.2.14"])
        #expect(counter.asked.sorted() == ["api.github.com", "github.com", "nowhere.invalid"])
    }

    @Test func anAnswerIsKeptOnlyForItsTime() {
        let counter = Counter()
        let lookups = RememberedLookups(keep: 0) { counter.lookUp($0) }
        _ = lookups.addresses(of: "github.com")
        _ = lookups.addresses(of: "github.com")
        #expect(counter.asked == ["github.com", "github.com"])
    }
}
