import Foundation
import SoBasics

/// `ContainerUptime` through `kubectl exec` (the flags reach the cluster the wait watches): runs
/// `cat /proc/uptime /proc/1/stat` in the container, which reads two files and changes nothing.
struct KubectlUptime: ContainerUptime {
    let processes: ProcessRunner
    let kubectlFlags: [String]
    /// An exec that takes longer than this is not waited for: the ask is unanswered (a busy node: kubectl exec took
    /// over 3 s here with four starts at once on two loaded cores), and asked again.
    static let timeout = 3.0
    /// How kubectl, the kubelet, containerd and runc say that the container asked is not running. On a busy node the
    /// process exits well before the runtime's own status says so, and the exec meets each layer in turn: containerd
    /// whose task is already gone ("no running task found"), its shim or runc that saw the exit ("cannot exec in a
    /// stopped state", "… stopped container"), then the kubelet ("container not found").
    static let stopped = [
        "container not found", "not running", "not created or running", "container_exited", "exited state",
        "completed pod", "no running task found", "cannot exec in a stopped", "process already finished",
    ]
    /// How an exec says it ran in the container and the command could not answer: no `cat` in the image, or `cat`
    /// itself failed. Only these (and an answer that says nothing) are "cannot tell": any other failure did not reach
    /// the container and says nothing of it.
    static let ranButCannotTell = ["executable file not found", "command terminated with exit code"]

    func uptime(pod: String, container: String, namespace: String) async -> UptimeAnswer {
        let args = ContainerExec.kubectl(
            kubectlFlags, namespace: namespace, pod: pod, container: container, ["cat", "/proc/uptime", "/proc/1/stat"])
        let result: ProcessResult
        do {
            result = try await processes.run(args, workingDirectory: nil, environment: nil, timeout: Self.timeout)
        } catch let e as SoError where e.missingProgram != nil {
            // kubectl is not installed: ask no more in this wait.
            return .unavailable(e.message)
        } catch let e as SoError {
            // An exec that hung past the timeout: on a busy node, the very node whose kubelet reports an exit late.
            return .unanswered(e.message)
        } catch {
            return .unanswered(String(describing: error))
        }
        if result.exitCode == 0 {
            if let age = ProcessAge.seconds(result.stdout) { return .ran(age) }
            return .cannotTell("an answer that is not an age")
        }
        let why = result.lastErrorLine
        // RBAC: the user may not create pods/exec here; asking again is refused again.
        let said = result.stderr.lowercased()
        if said.contains("forbidden") { return .unavailable(why) }
        // The runtime's word that the container is gone, which a busy kubelet reports rounds later.
        if Self.stopped.contains(where: { said.contains($0) }) { return .notRunning(why) }
        if Self.ranButCannotTell.contains(where: { said.contains($0) }) { return .cannotTell(why) }
        // Words not known here: a container that is gone can say so in a runtime's own (as containerd's "no running
        // task found" was, and was believed by the round), so it is no evidence that the container runs.
        return .unanswered(why)
    }
}
