import Foundation

/// What a container said of its first process.
enum UptimeAnswer: Equatable, Sendable {
    /// It was running, this many seconds after its first process started, when it answered.
    case ran(Double)
    /// It is not running (it exited, though the kubelet has not reported so yet), and how it was said: not believed,
    /// and asked again a second later (a new start is a new container).
    case notRunning(String)
    /// The command ran in the container and could not tell (no `cat` in its image, or an answer that says nothing),
    /// and why: it is believed by the kubelet's report.
    case cannotTell(String)
    /// The ask did not reach the container, or did not come back in time, in words not known here (neither "not
    /// running" nor "cannot tell"), and what they were: no evidence either way. Not believed, and asked again a second
    /// later; a start that goes unanswered `ContainerEvidence.unansweredAtMost` times is believed by the kubelet's
    /// report.
    case unanswered(String)
    /// No container can be asked (kubectl is missing, or the user may not exec), and why: the wait stops asking.
    case unavailable(String)
}
