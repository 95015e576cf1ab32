import Foundation

/// How a port-forward went: the pod's side answered a line (without its newline), or it did not (no listener on the
/// port, the right to forward refused, the connection lost or over time: `why`, one line).
public enum PortForwardOutcome: Sendable, Equatable {
    case answered(String)
    case failed(why: String)
}
