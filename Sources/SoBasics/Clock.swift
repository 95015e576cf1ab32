import Foundation

/// The clock seam: the time, and waiting (tests advance a fake clock instead of sleeping).
public protocol Clock: Sendable {
    func now() -> Date
    func sleep(seconds: Double) async throws
}
