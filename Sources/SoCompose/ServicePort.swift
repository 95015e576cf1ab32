import Foundation
import SoBasics

/// `SERVICE:PORT`, as the spec's `proxy-to` and `maintenance-service` name a compose service's port.
public struct ServicePort: Sendable, Equatable, CustomStringConvertible {
    public var service: String
    public var port: Int
    public init(service: String, port: Int) {
        self.service = service
        self.port = port
    }
    /// Nil unless the text is a non-empty name, one ':' and a port in 1-65535.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let port = ComposePorts.number(parts[1]), (1...65535).contains(port)
        else { return nil }
        self.init(service: String(parts[0]), port: port)
    }
    public var description: String { "\(service):\(port)" }
}
