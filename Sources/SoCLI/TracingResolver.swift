import Foundation
import Logging
import SoBasics

/// A `HostResolver` that logs each lookup, with `SO_TRACE_API` set: `dns: 3 hosts 12ms` (`at=` says when, from the
/// start of `so`): what resolving an egress policy's hosts costs a start (Benchmarks/trace_phases.py). The hosts are
/// counted, not named.
struct TracingResolver: HostResolver {
    let inner: HostResolver
    let logger: Logger

    func addresses(of host: String) -> [String] {
        timed(1) { inner.addresses(of: host) }
    }

    func addresses(of hosts: [String]) -> [String: [String]] {
        timed(hosts.count) { inner.addresses(of: hosts) }
    }

    func timed<T>(_ count: Int, _ body: () -> T) -> T {
        let began = ContinuousClock.now
        let out = body()
        let took = (ContinuousClock.now - began).components
        let ms = took.seconds * 1000 + took.attoseconds / 1_000_000_000_000_000
        logger.debug("\(count) \(count == 1 ? "host" : "hosts") \(ms)ms")
        return out
    }
}
