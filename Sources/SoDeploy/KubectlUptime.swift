import Foundation
import SoBasics

/// `ContainerUptime` through `kubectl exec` (the flags reach the cluster the wait watches): runs
/// `cat /proc/uptime /proc/1/stat` in the container, which reads two files and changes nothing.
struct KubectlUptime: ContainerUptime {
    let processes: ProcessRunner
    let kubectlFlags: [String]
    /// An exec that takes longer than this is not waited for: the kubelet's report believes the container.
    static let timeout = 3.0
    /// How kubectl, the kubelet and containerd say that the container asked is not running.
    static let stopped = [
        "container not found", "not running", "not created or running", "container_exited", "exited state",
        "completed pod",
    ]

    func uptime(pod: String, container: String, namespace: String) async -> UptimeAnswer {
        let args = ContainerExec.kubectl(
            kubectlFlags, namespace: namespace, pod: pod, container: container, ["cat", "/proc/uptime", "/proc/1/stat"])
        let result: ProcessResult
        do {
            result = try await processes.run(args, workingDirectory: nil, environment: nil, timeout: Self.timeout)
        } catch let e as SoError {
            // kubectl is not installed, or an exec hung past the timeout (a slow node): ask no more in this wait.
            return .unavailable(e.message)
        } catch {
            return .unavailable(String(describing: error))
        }
        if result.exitCode == 0, let age = ProcessAge.seconds(result.stdout) { return .ran(age) }
        let why = result.lastErrorLine
        // RBAC: the user may not create pods/exec here; asking again is refused again.
        let said = result.stderr.lowercased()
        if said.contains("forbidden") { return .unavailable(why) }
        // The runtime's word that the container is gone, which a busy kubelet reports rounds later.
        if Self.stopped.contains(where: { said.contains($0) }) { return .notRunning(why) }
        return .cannotTell(why)
    }
}
