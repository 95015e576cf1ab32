import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// The kubelet can leave a pod waiting for its own next look: a readiness probe's first run missed (a stale
/// status), or a pod retried only after a back-off (its claim's read refused before the node authorizer
/// linked it). The wait then marks the pod once, which makes the kubelet sync it.
@Suite struct KubeletNudgeTests {
    func context(_ clock: FixedClock) throws -> (SoContext, TempDir) {
        let t = try TempDir("so-nudge")
        return (
            SoContext(
                fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
                entropy: SeededEntropy(),
                console: CapturedConsole(), environment: [:], builtInRoot: nil), t
        )
    }

    func pods(_ cluster: FakeCluster) async throws -> [JSON] {
        try await cluster.list(try ResourceType.of(apiVersion: "v1", kind: "Pod"), namespace: "ns", labelSelector: nil)
    }

    @Test func aProbedContainerRunningUnreadyPastTheGraceIsMarkedOncePerStart() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        for (name, age, ready, probe) in [
            ("late", 3.0, false, true), ("just-started", 0.5, false, true), ("ready", 3.0, true, true),
            ("unprobed", 3.0, false, false),
        ] {
            try cluster.seed(WaiterTests.pod(name, age: age, ready: ready, probe: probe, clock: clock))
        }
        let (ctx, t) = try context(clock)
        defer { _ = t }
        let nudge = KubeletNudge(ctx: ctx, client: cluster, namespace: "ns")
        var seen = KubeletNudge.Sightings()
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(cluster.calls.filter { $0.hasPrefix("patch") } == ["patch Pod ns/late"], "\(cluster.calls)")
        let marked = try #require(cluster.object("Pod", "late", namespace: "ns")?.annotations[KubeletNudge.annotation])
        #expect(marked.hasPrefix("c@"))
        // The same container start is not marked twice.
        let before = cluster.calls.count
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(!cluster.calls[before...].contains { $0.hasPrefix("patch") })
        // One this wait has seen running unready for half a second is marked, whatever its whole-second start time.
        try await clock.sleep(seconds: KubeletNudge.probeSeenGrace)
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(
            cluster.calls[before...].filter { $0.hasPrefix("patch") } == ["patch Pod ns/just-started"],
            "\(cluster.calls)")
    }

    /// A container its caller proved ready, still running unready `provedGrace` after the proof, is marked, not half a
    /// second after it was first seen so; another running unready beside it is not (it may simply not be ready yet).
    @Test func aProofMarksTheProvedContainerStillRunningUnreadySoonAfter() async throws {
        let clock = FixedClock()
        let pods = try ["young", "other"].map {
            try JSON.parse(Data(WaiterTests.pod($0, age: 0.1, ready: false, probe: true, clock: clock).json().utf8))
        }
        let proof = ReadyConfirmation.Proof(pod: "young", container: "c")
        var seen = KubeletNudge.Sightings()
        #expect(KubeletNudge.due(pods, now: clock.now(), seen: &seen).isEmpty)
        #expect(KubeletNudge.due(pods, now: clock.now(), seen: &seen, proof: (proof, 0.05)).isEmpty)
        #expect(
            KubeletNudge.due(pods, now: clock.now(), seen: &seen, proof: (proof, KubeletNudge.provedGrace)).map(\.pod)
                == ["young"])
    }

    /// A pod scheduled a few seconds ago (`age`) whose sandbox is not ready (`sandbox`: the condition's
    /// status, nil when the kubelet does not report it), with its one container in `state`.
    static func scheduled(
        _ name: String, age: Double, sandbox: String?, state: YValue, job: Bool = false, clock: FixedClock
    ) -> KubeObject {
        var conditions: [YValue] = [
            .map([
                ("type", .string("PodScheduled")), ("status", .string("True")),
                ("lastTransitionTime", .string(Timestamps.rfc3339(clock.now().addingTimeInterval(-age)))),
            ])
        ]
        if let sandbox {
            conditions.append(.map([("type", .string("PodReadyToStartContainers")), ("status", .string(sandbox))]))
        }
        let status: YValue = .map([
            ("conditions", .list(conditions)),
            ("containerStatuses", .list([.map([("name", .string("c")), ("ready", .bool(false)), ("state", state)])])),
        ])
        return KubeObject(
            apiVersion: "v1", kind: "Pod", name: name, namespace: "ns",
            labels: [("app", "x")] + (job ? [("job-name", "j")] : []),
            body: [
                (
                    "spec",
                    .map([
                        ("nodeName", .string("n")),
                        ("containers", .list([.map([("name", .string("c")), ("image", .string("busybox"))])])),
                    ])
                ),
                ("status", status),
            ])
    }

    @Test func aPodScheduledSecondsAgoWithoutASandboxIsMarkedOnce() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        let creating: YValue = .map([("waiting", .map([("reason", .string("ContainerCreating"))]))])
        let running: YValue = .map([("running", .map([("startedAt", .string(Timestamps.rfc3339(clock.now())))]))])
        for pod in [
            Self.scheduled("stalled", age: 4, sandbox: "False", state: creating, clock: clock),
            Self.scheduled("stalled-job", age: 4, sandbox: nil, state: creating, job: true, clock: clock),
            Self.scheduled("just-scheduled", age: 1, sandbox: "False", state: creating, clock: clock),
            Self.scheduled("sandboxed", age: 4, sandbox: "True", state: creating, clock: clock),
            Self.scheduled("old-kubelet-running", age: 4, sandbox: nil, state: running, clock: clock),
        ] {
            try cluster.seed(pod)
        }
        let (ctx, t) = try context(clock)
        defer { _ = t }
        let nudge = KubeletNudge(ctx: ctx, client: cluster, namespace: "ns")
        var seen = KubeletNudge.Sightings()
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(
            cluster.calls.filter { $0.hasPrefix("patch") }.sorted() == [
                "patch Pod ns/stalled", "patch Pod ns/stalled-job",
            ], "\(cluster.calls)")
        #expect(
            cluster.object("Pod", "stalled", namespace: "ns")?.annotations[KubeletNudge.annotation]?.hasPrefix(
                "sandbox@") == true)
        let before = cluster.calls.count
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(!cluster.calls[before...].contains { $0.hasPrefix("patch") })
        // One this wait has seen scheduled without a sandbox for a second is marked, whatever its whole-second time.
        try await clock.sleep(seconds: KubeletNudge.sandboxSeenGrace)
        await nudge.nudge(try await pods(cluster), seen: &seen)
        #expect(
            cluster.calls[before...].filter { $0.hasPrefix("patch") } == ["patch Pod ns/just-scheduled"],
            "\(cluster.calls)")
    }

    @Test func aUserWhoMayNotPatchPodsWaitsAsBefore() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        try cluster.seed(WaiterTests.pod("late", age: 3, ready: false, probe: true, clock: clock))
        cluster.failures["patch Pod ns/late"] = SoError("pods \"late\" is forbidden (Forbidden)")
        let (ctx, t) = try context(clock)
        defer { _ = t }
        var seen = KubeletNudge.Sightings()
        await KubeletNudge(ctx: ctx, client: cluster, namespace: "ns").nudge(try await pods(cluster), seen: &seen)
        #expect(cluster.object("Pod", "late", namespace: "ns")?.annotations[KubeletNudge.annotation] == nil)
    }
}
