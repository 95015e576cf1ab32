import Foundation
import SoBasics

/// A `port-forward` argument, `[LOCAL:]REMOTE` (ports in 1-65535; no local port: the same as the remote one).
public struct ForwardedPort: Sendable, Equatable {
    public var local: Int?
    public var remote: Int
    public init(local: Int?, remote: Int) {
        self.local = local
        self.remote = remote
    }
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let remote = ComposePorts.number(parts[parts.count - 1]),
            (1...65535).contains(remote)
        else { return nil }
        if parts.count == 2 {
            // kubectl's `:REMOTE` asks for a random local port.
            guard parts[0].isEmpty || ComposePorts.number(parts[0]).map({ (0...65535).contains($0) }) == true else {
                return nil
            }
            local = ComposePorts.number(parts[0])
        }
        self.remote = remote
    }
}
