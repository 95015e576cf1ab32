import Foundation
import SoBasics

/// One connection to a port on a pod's loopback through the API server's `pods/portforward` (what `kubectl
/// port-forward` does for one connection, without kubectl): `send` written once the connection is up, then what the
/// pod's side answers read up to its first newline (or until it closes).
public struct PortForwardRequest: Sendable {
    public var namespace: String
    public var pod: String
    public var port: Int
    /// What is written to the port, made once the connection is asked for (it may wait for something else).
    public var send: ExecInput.Later
    /// Seconds the whole exchange may take; past them the connection is closed and the outcome says so.
    public var timeout: Double

    public init(namespace: String, pod: String, port: Int, send: ExecInput.Later, timeout: Double) {
        self.namespace = namespace
        self.pod = pod
        self.port = port
        self.send = send
        self.timeout = timeout
    }
}
