import Foundation
import SoBasics
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

public struct SystemEntropy: Entropy {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
    }
}
