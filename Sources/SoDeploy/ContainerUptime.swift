import Foundation

/// How long a running container's first process has run, asked of the container itself: the evidence a container
/// without a readiness probe is believed on once it has run a second (`ContainerEvidence.provenSeconds`), sooner
/// than the kubelet's next round can report an exit. `KubectlUptime` asks through `kubectl exec`.
protocol ContainerUptime: Sendable {
    func uptime(pod: String, container: String, namespace: String) async -> UptimeAnswer
}
