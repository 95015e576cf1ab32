import Foundation

/// A container its caller proved ready by itself (`so up`: its exec saw the workspace's clone done and ran the
/// container's own readiness probe there), usually before the kubelet's probe is reported. Not believed for that:
/// any reader right after the start sees what the kubelet says, so the start's wait still waits for it. But the
/// kubelet's first probe run can be lost (`KubeletNudge`), and a proof says when its probe would pass: soon after
/// it (`KubeletNudge.provedGrace`), the container, still running unready, is nudged, not half a second later.
public final class ReadyConfirmation: @unchecked Sendable {
    /// The pod and container proved ready.
    struct Proof: Sendable, Equatable {
        var pod: String
        var container: String
    }

    private let lock = NSLock()
    private var proof: Proof?
    private let signal = ChangeSignal()

    public init() {}

    /// What was proved so far (nil: nothing yet).
    var proved: Proof? { lock.withLock { proof } }

    /// `container` of `pod` answers as its readiness probe wants: the wait, where it pauses, looks again at once.
    public func confirm(pod: String, container: String) async {
        lock.withLock { proof = Proof(pod: pod, container: container) }
        await signal.raise()
    }

    /// Returns once something is confirmed (at once when it was since the last call), or once cancelled.
    func next() async { await signal.next() }
}
