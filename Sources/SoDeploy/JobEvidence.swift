import SoKube

/// A Job is done when its pods say so: the Job controller counts a pod that succeeded a moment or two
/// after the kubelet reports it (it gathers pod updates for a second, then removes each pod's tracking
/// finalizer before it counts), so a wait that reads only the Job's status waits that out.
enum JobEvidence {
    /// Whether enough of `job`'s own pods (owned by its uid) have succeeded: `spec.completions`, 1 when
    /// unset. An Indexed Job is left to its own count (which indexes succeeded is the controller's to say).
    static func succeeded(_ job: JSON, pods: [JSON]) -> Bool {
        guard job.at("spec", "completionMode")?.string != "Indexed", let uid = job.at("metadata", "uid")?.string
        else { return false }
        let want = job.at("spec", "completions")?.int ?? 1
        let done = pods.filter { pod in
            let owned = pod.at("metadata", "ownerReferences")?.array.contains { $0["uid"]?.string == uid } == true
            return owned && podSucceeded(pod)
        }
        return want > 0 && done.count >= want
    }

    /// A pod that succeeded: its phase says so, or every one of its containers exited with 0 (it is not
    /// restarted: a Job's pods restart only on failure), which the kubelet reports a round before the phase.
    static func podSucceeded(_ pod: JSON) -> Bool {
        if pod.at("status", "phase")?.string == "Succeeded" { return true }
        if pod.at("status", "phase")?.string == "Failed" { return false }
        let names = (pod.at("spec", "containers")?.array ?? []).compactMap { $0["name"]?.string }
        let statuses = pod.at("status", "containerStatuses")?.array ?? []
        return !names.isEmpty
            && names.allSatisfy { name in
                statuses.contains { $0["name"]?.string == name && $0.at("state", "terminated", "exitCode")?.int == 0 }
            }
    }
}
