import Foundation

/// The randomness seam. The live one is the system CSPRNG (getrandom on Linux).
public protocol Entropy: Sendable { func bytes(_ count: Int) -> [UInt8] }
