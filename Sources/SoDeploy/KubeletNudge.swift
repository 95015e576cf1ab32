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
    /// The same by this wait's own clock, from when it first saw the container running unready or the pod
    /// scheduled without a sandbox: the whole-second times above leave a missed probe a second more, and a
    /// stalled pod two. On the real node a probed container is ready 0.15–0.4 s after it is seen running and a
    /// sandbox takes 0.25–0.5 s; a kubelet that was merely slow syncs once more.
    static let probeSeenGrace = 0.5
    /// How long after a container was proved ready by the caller's own exec (`ReadyConfirmation`: it ran the probe's
    /// command and it passed) the kubelet may take to say so: on the real node its Ready is in the API 20-60 ms after.
    static let provedGrace = 0.1
    /// The `Sightings` key of the first look that saw a proof.
    static let proofKey = "so.dev/proved"
    static let sandboxSeenGrace = 1.0

    /// When this wait first saw each pod or container in a state a nudge is for (keyed as the annotation's
    /// values, per pod).
    struct Sightings: Sendable {
        private var first: [String: Date] = [:]
        /// Seconds since `key` was first seen (0 the first time).
        mutating func age(_ key: String, now: Date) -> Double {
            let at = first[key] ?? now
            first[key] = at
            return now.timeIntervalSince(at)
        }
    }

    /// The annotation value each pod should be given now, for the pods not marked so yet.
    /// `proof`: a container its caller proved ready (`ReadyConfirmation`), and the seconds since this wait first saw
    /// the proof: `provedGrace` after it, the kubelet has had time to say so, and that container, still running
    /// unready, is marked (its probe's first run was lost).
    static func due(
        _ pods: [JSON], now: Date, seen: inout Sightings, proof: (ReadyConfirmation.Proof, Double)? = nil
    ) -> [(
        pod: String, value: String
    )] {
        pods.compactMap { pod in
            guard Waiter.live(pod),
                let value = stalledSandbox(pod, now: now, seen: &seen)
                    ?? missedProbes(
                        pod, now: now, seen: &seen,
                        proved: proof.flatMap { $0.0.pod == pod.name && $0.1 >= provedGrace ? $0.0.container : nil }),
                pod.annotations[annotation] != value
            else { return nil }
            return (pod.name, value)
        }
    }

    /// `sandbox@<scheduled at>` for a pod scheduled `sandboxGrace` ago (or seen so for `sandboxSeenGrace`) that
    /// has no ready sandbox and no container that ran (the second test covers kubelets without the
    /// PodReadyToStartContainers condition).
    static func stalledSandbox(_ pod: JSON, now: Date, seen: inout Sightings) -> String? {
        let conditions = pod.at("status", "conditions")?.array ?? []
        func condition(_ type: String) -> JSON? { conditions.first { $0["type"]?.string == type } }
        guard let scheduled = condition("PodScheduled"), scheduled["status"]?.string == "True",
            let atText = scheduled["lastTransitionTime"]?.string, let at = Timestamps.parse(atText),
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
        let value = "sandbox@\(atText)"
        let seenFor = seen.age(pod.name + "/" + value, now: now)
        return now.timeIntervalSince(at) >= sandboxGrace || seenFor >= sandboxSeenGrace ? value : nil
    }

    /// `<container>@<started at>,…` for probed containers (not a Job's) running unready past `probeGrace` (or seen
    /// so for `probeSeenGrace`; `proved`: the one proved ready `provedGrace` ago, at once).
    static func missedProbes(_ pod: JSON, now: Date, seen: inout Sightings, proved: String? = nil) -> String? {
        guard pod.labels["job-name"] == nil else { return nil }
        let probed = Waiter.probedContainers(pod)
        var late: [String] = []
        for c in pod.at("status", "containerStatuses")?.array ?? [] {
            guard let name = c["name"]?.string, probed.contains(name), c["ready"]?.bool != true,
                let startedText = c.at("state", "running", "startedAt")?.string,
                let started = Timestamps.parse(startedText)
            else { continue }
            let value = "\(name)@\(startedText)"
            let seenFor = seen.age(pod.name + "/" + value, now: now)
            if name == proved || now.timeIntervalSince(started) >= probeGrace
                || seenFor >= probeSeenGrace
            {
                late.append(value)
            }
        }
        return late.isEmpty ? nil : late.sorted().joined(separator: ",")
    }

    /// Marks the pods `due` names; a user who may not patch pods waits for the kubelet as before.
    func nudge(_ pods: [JSON], seen: inout Sightings, proof: (ReadyConfirmation.Proof, Double)? = nil) async {
        for (pod, value) in Self.due(pods, now: ctx.clock.now(), seen: &seen, proof: proof) {
            // Refused (a user who may not patch pods): the kubelet syncs the pod in its own time, as before.
            if (try? await client.annotate(.pod, name: pod, namespace: namespace, [(Self.annotation, value)])) != nil {
                ctx.verbose("pod \(namespace)/\(pod): the kubelet is late (\(value)); marked so it syncs the pod now")
            }
        }
    }
}
