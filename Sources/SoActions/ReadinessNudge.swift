import Foundation
import SoBasics
import SoKube

/// A container's first readiness probe, made to run when the kubelet missed it.
///
/// The kubelet runs a readiness probe at once when it first sees a container running (a "manual run"),
/// then every `periodSeconds`. That first run races the kubelet's own status cache: when it reads the
/// container as not yet running, it is skipped and the container stays unready until the next period (30 s
/// for a compose `healthcheck` of `interval: 30s`; seen on the real node as a 15 s `so up`, one start in
/// seven). Any change to the pod's metadata makes the kubelet sync the pod and run the probe again. So the
/// wait marks such a pod once per container start with an annotation, `so.dev/probe-nudge`, whose value
/// names the container and when it started: one merge patch, and only for a container the API already
/// shows running for a moment and not ready. A probe that fails for real just runs once more.
struct ReadinessNudge: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String

    static let annotation = "so.dev/probe-nudge"
    /// How long the API shows a container running before the kubelet is thought to have missed its first
    /// probe (start times have whole seconds, so the real age is 0.5–1.5 s; the first run takes ~0.1 s).
    static let grace = 1.5

    /// The annotation value each pod should be given now: one of its probed containers runs unready past
    /// `grace`, and the pod was not marked for that container start yet.
    static func due(_ pods: [JSON], now: Date) -> [(pod: String, value: String)] {
        var out: [(String, String)] = []
        for pod in pods where pod.at("metadata", "deletionTimestamp") == nil {
            let probed = Waiter.probedContainers(pod)
            let late = (pod.at("status", "containerStatuses")?.array ?? []).compactMap { c -> String? in
                guard let name = c["name"]?.string, probed.contains(name), c["ready"]?.bool != true,
                      let startedText = c.at("state", "running", "startedAt")?.string, let started = Timestamps.parse(startedText),
                      now.timeIntervalSince(started) >= grace else { return nil }
                return "\(name)@\(startedText)"
            }.sorted()
            guard !late.isEmpty else { continue }
            let value = late.joined(separator: ",")
            if pod.annotations[annotation] != value { out.append((pod.name, value)) }
        }
        return out
    }

    /// Marks the pods `due` names; a user who may not patch pods waits for the period as before.
    func nudge(_ pods: [JSON]) async {
        guard let podType = try? ResourceType.of(apiVersion: "v1", kind: "Pod") else { return }
        for (pod, value) in Self.due(pods, now: ctx.clock.now()) {
            let patch = Data(JSONWriter.bytes(.map([("metadata", .map([("annotations", .map([(Self.annotation, .string(value))]))]))]), .compact))
            if (try? await client.patch(podType, name: pod, namespace: namespace, mergePatch: patch)) != nil {
                ctx.verbose("pod \(namespace)/\(pod): readiness probe not run yet (\(value)); marked so the kubelet runs it")
            }
        }
    }
}
