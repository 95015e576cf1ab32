import Foundation

/// What a container said of its first process.
enum UptimeAnswer: Equatable, Sendable {
    /// It was running, this many seconds after its first process started, when it answered.
    case ran(Double)
    /// This container cannot tell (not running, or no `cat` in its image), and why: it is believed by the kubelet's
    /// report.
    case cannotTell(String)
    /// No container can be asked (kubectl is missing, or the user may not exec), and why: the wait stops asking.
    case unavailable(String)
}
