import Foundation
import SoBasics
import SoSystem

/// A clock that stands still until something sleeps, then jumps forward by the sleep.
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
        await Task.yield()
    }
}
