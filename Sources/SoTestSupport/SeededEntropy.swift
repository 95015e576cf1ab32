import Foundation
import SoBasics
import SoSystem

/// Deterministic bytes from a seed (xorshift); never for real secrets.
public final class SeededEntropy: Entropy, @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()
    public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed == 0 ? 1 : seed }
    public func bytes(_ count: Int) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }
}
