import Foundation

/// What a container said of its first process.
enum UptimeAnswer: Equatable, Sendable {
    /// It was running, this many seconds after its first process started, when it answered.
    case ran(Double)
    /// It is not running (it exited, though the kubelet has not reported so yet), and how it was said: not believed,
    /// and asked again a second later (a new start is a new container).
    case notRunning(String)
    /// This container cannot tell (no `cat` in its image, or an answer that says nothing), and why: it is believed by
    /// the kubelet's report.
    case cannotTell(String)
    /// No container can be asked (kubectl is missing, or the user may not exec), and why: the wait stops asking.
    case unavailable(String)
}
