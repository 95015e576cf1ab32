import Foundation
import SoBasics
import SoSystem

/// A clock that stands still until something sleeps, then jumps forward by the sleep (and lets some real time pass,
/// for the tasks running beside the sleeper).
public final class FixedClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date
    public private(set) var slept: Double = 0
    public init(_ date: Date = Date(timeIntervalSince1970: 1_780_000_000)) { self.date = date }
    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return date
    }
    public func sleep(seconds: Double) async throws {
        lock.withLock {
            date = date.addingTimeInterval(seconds)
            slept += seconds
        }
        // Real time too, 10 ms a fake second and 10 ms at most: a task polling on this clock (a wait with a timeout
        // of fake seconds) must not run through its timeout before the tasks beside it (the start it waits for) get
        // the processors. With 50 µs a sleep, a carry-in's wait of 300 fake seconds for the container of a start
        // beside it ended in 0.4 s of real time on a loaded machine, before that start had made the pod
        // (PoolClaimCarryTests, in CI, 2026-11-28; 1 run in 3 with four busy loops beside the suite). Now such a wait
        // lasts 3 s or more.
        try await Task.sleep(nanoseconds: UInt64(max(min(seconds, 1), 0.005) * 10_000_000))
    }
}
