import Foundation
import SoActions
import SoBasics
import SoKube

/// A pod the kubelet left waiting for its own next look, made to be synced now.
///
/// Any change to a pod's metadata makes the kubelet sync the pod at once. The wait uses that, with one
/// annotation (`so.dev/kubelet-nudge`) whose value names what was late, in two cases seen on the real node:
///
/// - **A probe's first run missed.** The kubelet runs a readiness probe at once when it first sees a
///   container running, then every `periodSeconds`. That first run races the kubelet's own status cache:
///   when it reads the container as not yet running, the container stays unready until the next period
///   (30 s for a compose `healthcheck` of `interval: 30s`; a 15 s `so up`, one start in seven). Marked once
///   per container start, when the API shows a probed container running unready for a moment.
/// - **A pod stalled before its sandbox.** Under load the kubelet can read a new pod before the API
///   server's node authorizer links that pod's claim to the node; the claim's read is refused ("no
///   relationship found between node … and this object") and the kubelet retries the pod only after a
///   10–15 s back-off (an 18 s workspace in 20 started 4 at a time). Marked once per pod, when it has been
///   scheduled for a few seconds and its sandbox is not ready.
///
/// One merge patch each; a kubelet that was merely slow syncs once more.
struct KubeletNudge: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String

    static let annotation = "so.dev/kubelet-nudge"
    /// How long the API shows a container running before the kubelet is thought to have missed its first
    /// probe (start times have whole seconds, so the real age is 0.5–1.5 s; the first run takes ~0.1 s).
    static let probeGrace = 1.5
    /// How long a scheduled pod may go without its sandbox (whole seconds again: 3–4 s; a warm node makes
    /// one in under a second, four at once on 2 cores in about two).
    static let sandboxGrace = 3.0

    /// The annotation value each pod should be given now, for the pods not marked so yet.
    static func due(_ pods: [JSON], now: Date) -> [(pod: String, value: String)] {
        pods.compactMap { pod in
            guard pod.at("metadata", "deletionTimestamp") == nil,
                let value = stalledSandbox(pod, now: now) ?? missedProbes(pod, now: now),
                pod.annotations[annotation] != value
            else { return nil }
            return (pod.name, value)
        }
    }

    /// `sandbox@<scheduled at>` for a pod scheduled `sandboxGrace` ago that has no ready sandbox and no
    /// container that ran (the second test covers kubelets without the PodReadyToStartContainers condition).
    static func stalledSandbox(_ pod: JSON, now: Date) -> String? {
        let conditions = pod.at("status", "conditions")?.array ?? []
        func condition(_ type: String) -> JSON? { conditions.first { $0["type"]?.string == type } }
        guard let scheduled = condition("PodScheduled"), scheduled["status"]?.string == "True",
            let atText = scheduled["lastTransitionTime"]?.string, let at = Timestamps.parse(atText),
            now.timeIntervalSince(at) >= sandboxGrace,
            condition("PodReadyToStartContainers")?["status"]?.string != "True"
        else { return nil }
        let statuses =
            (pod.at("status", "initContainerStatuses")?.array ?? [])
            + (pod.at("status", "containerStatuses")?.array ?? [])
        let started = statuses.contains {
            $0.at("state", "running") != nil || $0.at("state", "terminated") != nil
                || $0["lastState"]?["terminated"] != nil
        }
        guard !started else { return nil }
        return "sandbox@\(atText)"
    }

    /// `<container>@<started at>,…` for probed containers (not a Job's) running unready past `probeGrace`.
    static func missedProbes(_ pod: JSON, now: Date) -> String? {
        guard pod.labels["job-name"] == nil else { return nil }
        let probed = Waiter.probedContainers(pod)
        let late = (pod.at("status", "containerStatuses")?.array ?? []).compactMap { c -> String? in
            guard let name = c["name"]?.string, probed.contains(name), c["ready"]?.bool != true,
                let startedText = c.at("state", "running", "startedAt")?.string,
                let started = Timestamps.parse(startedText),
                now.timeIntervalSince(started) >= probeGrace
            else { return nil }
            return "\(name)@\(startedText)"
        }.sorted()
        return late.isEmpty ? nil : late.joined(separator: ",")
    }

    /// Marks the pods `due` names; a user who may not patch pods waits for the kubelet as before.
    func nudge(_ pods: [JSON]) async {
        for (pod, value) in Self.due(pods, now: ctx.clock.now()) {
            // Refused (a user who may not patch pods): the kubelet syncs the pod in its own time, as before.
            if (try? await client.annotate(.pod, name: pod, namespace: namespace, [(Self.annotation, value)])) != nil {
                ctx.verbose("pod \(namespace)/\(pod): the kubelet is late (\(value)); marked so it syncs the pod now")
            }
        }
    }
}
