import Foundation
import SoBasics

/// A port's protocol, as compose writes it (lowercase).
public enum PortProtocol: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case tcp, udp, sctp
    /// As Kubernetes writes it (`TCP`, `UDP`, `SCTP`).
    public var kubernetes: String { rawValue.uppercased() }
    public var description: String { rawValue }
}
