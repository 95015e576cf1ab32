import Foundation
import SoBasics
import SoSystem

/// A clock that stands still until something sleeps, then jumps forward by the sleep (and lets 50 µs of real time
/// pass, for the tasks running beside the sleeper).
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
        // A moment of real time too: a task polling on this clock (a wait with a timeout of fake seconds) must not
        // run through its timeout before the tasks beside it (the start it waits for) get the processors.
        try await Task.sleep(nanoseconds: 50_000)
    }
}
