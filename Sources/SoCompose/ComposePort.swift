import Foundation
import SoBasics

/// One published or exposed port, parsed once. Ranges expand to one entry per port when both sides are
/// ranges of the same length (or when there is no host side).
public struct ComposePort: Sendable, Equatable {
    public var hostIP: String?
    /// The fixed host port, nil when not published to one (no host side, or a host range).
    public var hostPort: Int?
    /// A host range for one container port (`8000-8010:80`): the runtime picks a free one.
    public var hostRange: ClosedRange<Int>?
    public var containerPort: Int
    public var proto: PortProtocol
    /// The text as written (short syntax) or a synthesized short form (long syntax).
    public var raw: String
    public init(
        hostIP: String? = nil, hostPort: Int? = nil, hostRange: ClosedRange<Int>? = nil, containerPort: Int,
        proto: PortProtocol = .tcp, raw: String
    ) {
        self.hostIP = hostIP
        self.hostPort = hostPort
        self.hostRange = hostRange
        self.containerPort = containerPort
        self.proto = proto
        self.raw = raw
    }
}
