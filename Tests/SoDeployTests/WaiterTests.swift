import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct WaiterTests {
    static let restartRefusal =
        "pods \"ws-8467fdc769-xfrdd\" is forbidden: exceeded quota: ws-quota, requested: limits.cpu=2,limits.memory=4Gi, "
        + "used: limits.cpu=3,limits.memory=4352Mi, limited: limits.cpu=4,limits.memory=8Gi"

    /// The API server's words of a quota's refusal, read: a pod that fits every limit alone (a restart's new pod,
    /// refused while the quota still counts the old one), and one that never can.
    @Test func aQuotaRefusalSaysWhetherThePodFitsAlone() {
        #expect(Waiter.quotaFitsAlone(Self.restartRefusal))
        #expect(
            !Waiter.quotaFitsAlone(
                "pods \"web-1\" is forbidden: exceeded quota: q, requested: limits.cpu=2, used: limits.cpu=0, "
                    + "limited: limits.cpu=200m"))
        #expect(
            !Waiter.quotaFitsAlone("pods \"w\" is forbidden: exceeded quota: q"), "unreadable: not believed to pass")
        #expect(
            !Waiter.quotaFitsAlone(
                "exceeded quota: q, requested: requests.memory=9Gi,pods=1, used: pods=0, limited: requests.memory=8Gi,pods=10"
            ))
    }

    /// A restart's new pod refused by a quota that still counts the old one is waited for (while a pod is going
    /// away, or within `quotaGrace` of the refusal), said on the line; past the grace with none going, it is fatal.
    @Test func aQuotaStillCountingAReplacedPodIsWaitedFor() {
        let now = Date(timeIntervalSince1970: 1_795_833_035)
        func deployment(refusedAgo: TimeInterval) -> JSON {
            .object([
                "metadata": .object(["name": .string("ws")]),
                "status": .object([
                    "availableReplicas": .number(0),
                    "conditions": .array([
                        .object([
                            "type": .string("ReplicaFailure"), "status": .string("True"),
                            "reason": .string("FailedCreate"), "message": .string(Self.restartRefusal),
                            "lastTransitionTime": .string(Timestamps.rfc3339(now.addingTimeInterval(-refusedAgo))),
                        ])
                    ]),
                ]),
            ])
        }
        let going: JSON = .object([
            "metadata": .object([
                "name": .string("ws-old"), "deletionTimestamp": .string(Timestamps.rfc3339(now)),
            ])
        ])
        let fresh = Waiter.replicaFailures([deployment(refusedAgo: 2)], namespace: "n", pods: [], now: now)
        #expect(fresh.map(\.fatal) == [false] && fresh.first?.shown == true)
        #expect(fresh.first?.message.hasPrefix("Deployment n/ws waits to create its pods: ") == true)
        let old = deployment(refusedAgo: Waiter.quotaGrace + 1)
        #expect(Waiter.replicaFailures([old], namespace: "n", pods: [going], now: now).map(\.fatal) == [false])
        let fatal = Waiter.replicaFailures([old], namespace: "n", pods: [], now: now)
        #expect(fatal.map(\.fatal) == [true])
        #expect(fatal.first?.message.hasPrefix("Deployment n/ws cannot create its pods: ") == true)
    }

    /// A failed Job is explained by a pod of its own (its `job-name` label), not by whichever problem
    /// the deployment's pods report first, nor by text that happens to mention the Job's name.
    @Test func aFailedJobIsExplainedByItsOwnPod() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            guard case .object(var o) = json else { return }
            if o["kind"]?.string == "Job" { o["status"] = .object(["failed": .number(1)]) }
            json = .object(o)
        }
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let job = "\(c.id)-job-example-migrate"
        for (pod, labels, reason) in [
            ("web-1", [(String, String)](), "ContainerCreating"),
            ("migrate-x1", [("job-name", job)], "PodInitializing"),
        ] {
            try c.cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: pod, namespace: c.id,
                    labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)] + labels))
            c.cluster.update("Pod", pod, namespace: c.id) { p in
                guard case .object(var o) = p else { return }
                o["status"] = .object([
                    "containerStatuses": .array([
                        .object([
                            "name": .string("c"), "state": .object(["waiting": .object(["reason": .string(reason)])]),
                        ])
                    ])
                ])
                p = .object(o)
            }
        }
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message
                == "Job \(c.id)/\(job) failed: pod \(c.id)/migrate-x1 container c is waiting (PodInitializing)"
        }
    }

    /// A Pod whose one container `c` runs since `age` seconds before the clock's now.
    static func pod(_ name: String, age: Double, ready: Bool = true, restarts: Int = 0, probe: Bool, clock: FixedClock)
        -> KubeObject
    {
        let started = Timestamps.rfc3339(clock.now().addingTimeInterval(-age))
        var container: [(String, YValue)] = [("name", .string("c")), ("image", .string("busybox"))]
        if probe {
            container.append(("readinessProbe", .map([("exec", .map([("command", .list([.string("true")]))]))])))
        }
        let status: YValue = .map([
            (
                "containerStatuses",
                .list([
                    .map([
                        ("name", .string("c")), ("ready", .bool(ready)), ("restartCount", .int(restarts)),
                        ("state", .map([("running", .map([("startedAt", .string(started))]))])),
                    ])
                ])
            )
        ])
        return KubeObject(
            apiVersion: "v1", kind: "Pod", name: name, namespace: "ns", labels: [("app", "x")],
            body: [("spec", .map([("containers", .list([.map(container)]))])), ("status", status)])
    }

    /// A container that has run for a moment is looked at again before the rollout is believed — unless a
    /// readiness probe already answered for it (compose healthcheck): then Ready is believed at once. One
    /// that restarted is looked at again with or without a probe.
    @Test func youngContainersAreLookedAtAgainUnlessTheirProbeAnswered() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        for (name, age, ready, restarts, probe) in [
            ("bare", 0.5, true, 0, false), ("probed", 0.5, true, 0, true), ("probed-restarted", 0.5, true, 1, true),
            ("probed-unready", 0.5, false, 0, true), ("old", 30, true, 0, false),
        ] {
            try cluster.seed(Self.pod(name, age: age, ready: ready, restarts: restarts, probe: probe, clock: clock))
        }
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(),
            console: CapturedConsole(), environment: [:], builtInRoot: nil)
        let waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        var seen = ContainerEvidence()
        let health = waiter.containerHealth(try await waiter.listPods(), evidence: &seen)
        #expect(health.restarting.isEmpty)
        #expect(
            health.young == [
                "pod bare container c", "pod probed-restarted container c", "pod probed-unready container c",
            ])
    }

    /// A claim bound by name to a volume another claim still holds says which, and how to free or remove it;
    /// another Pending claim gets the usual hint.
    @Test func aClaimWhoseVolumeAnotherClaimHoldsSaysWhich() async throws {
        let cluster = FakeCluster()
        try cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns"))
        func claim(_ name: String, volume: String?) -> KubeObject {
            KubeObject(
                apiVersion: "v1", kind: "PersistentVolumeClaim", name: name, namespace: "ns", labels: [("app", "x")],
                body: [
                    ("spec", .map(volume.map { [("volumeName", .string($0))] } ?? [])),
                    ("status", .map([("phase", .string("Pending"))])),
                ])
        }
        try cluster.seed(claim("data", volume: "vol"))
        try cluster.seed(claim("dynamic", volume: nil))
        try cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "PersistentVolume", name: "vol",
                body: [
                    (
                        "spec",
                        .map([
                            (
                                "claimRef",
                                .map([("namespace", .string("old")), ("name", .string("data")), ("uid", .string("u1"))])
                            )
                        ])
                    ),
                    ("status", .map([("phase", .string("Released"))])),
                ]))
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: FixedClock(),
            entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
        var waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        waiter.directory = "dep"
        let waiting = try JSON.parse(
            Data(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns",
                    body: [
                        (
                            "status",
                            .map([
                                (
                                    "conditions",
                                    .list([
                                        .map([
                                            ("type", .string("PodScheduled")), ("status", .string("False")),
                                            (
                                                "message",
                                                .string(
                                                    "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."
                                                )
                                            ),
                                        ])
                                    ])
                                )
                            ])
                        )
                    ]
                ).json().utf8))
        let problems = try await waiter.diagnose(pods: [waiting])
        // What keeps the pod waiting comes first, where a timeout names it; the pod's own says where to look.
        #expect(problems.first?.held == true, "\(problems.map(\.message))")
        let pod = try #require(problems.first { $0.message.hasPrefix("pod ns/p cannot be scheduled") })
        #expect(pod.hint == "a claim the pod mounts is not bound; 'so deployment --dir dep status' names it")
        let held = try #require(problems.first { $0.message.contains("ns/data") })
        #expect(
            held.message
                == "PersistentVolumeClaim ns/data is Pending: its PersistentVolume vol is Released, held by claim old/data"
        )
        #expect(held.hint.contains("kubectl patch pv vol") && held.hint.contains("stop --delete-volumes"))
        let other = try #require(problems.first { $0.message.contains("ns/dynamic") })
        #expect(other.hint.hasPrefix("the cluster has no default StorageClass"))
    }

    /// A container the last start's wait believed (the Namespace's `so.dev/believed`: this pod, this container,
    /// this restart count) is believed at once by the next start; another start of it (a restart) is looked at again.
    /// The wait records what it believed, once.
    @Test func whatTheLastStartBelievedIsBelievedAtOnceWhileItIsTheSameStart() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        try cluster.seed(Self.pod("bare", age: 0.5, probe: false, clock: clock))
        try cluster.seed(Self.pod("again", age: 0.5, restarts: 1, probe: false, clock: clock))
        try cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns"))
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
        var waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        let pods = try await waiter.listPods()
        let uid = { (name: String) in pods.first { $0.name == name }?.at("metadata", "uid")?.string ?? name }
        waiter.believedBefore = ["\(uid("bare"))/c#0", "\(uid("again"))/c#0"]
        var seen = ContainerEvidence()
        #expect(waiter.containerHealth(pods, evidence: &seen).young == ["pod again container c"])
        await waiter.recordBelief(pods)
        let recorded = cluster.object("Namespace", "ns")?.annotations["so.dev/believed"] ?? ""
        #expect(Set(recorded.split(separator: ",").map(String.init)) == Waiter.beliefKeys(pods), "\(recorded)")
        #expect(recorded.contains("\(uid("again"))/c#1"))
    }

    /// A container whose Secret is missing cannot start: said, and the wait ends. One the kubelet cannot create
    /// because its own cache of Secrets is not in step yet (a busy node) is waited out: the kubelet tries again.
    @Test func aMissingSecretEndsTheWaitAndTheKubeletsCacheNotInStepDoesNot() async throws {
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: FixedClock(),
            entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
        let waiter = Waiter(ctx: ctx, client: FakeCluster(), namespace: "ns", selector: "app=x")
        func waiting(_ message: String) -> JSON {
            .object([
                "name": .string("c"),
                "state": .object([
                    "waiting": .object([
                        "reason": .string("CreateContainerConfigError"), "message": .string(message),
                    ])
                ]),
            ])
        }
        let pod = JSON.object(["metadata": .object(["name": .string("web-1")])])
        let missing = try await waiter.containerProblems(pod, statuses: [waiting("secret \"web-env\" not found")])
        #expect(missing.count == 1 && missing[0].fatal && missing[0].message.hasSuffix("secret \"web-env\" not found"))
        let cache = try await waiter.containerProblems(
            pod, statuses: [waiting("failed to sync secret cache: timed out waiting for the condition")])
        #expect(cache.count == 1 && !cache[0].fatal, "\(cache)")
    }

    /// A container its caller proved ready (`so up`'s exec saw the clone done and ran the probe) does not end the
    /// wait: a reader right after it sees what the kubelet says, and the kubelet has not said Ready. But its pod is
    /// marked soon after the proof (`KubeletNudge.provedGrace`), where without a proof the same pod, running for a
    /// moment, is not marked in the same time (its grace is half a second).
    @Test func aProofIsNotReadinessButNudgesALateKubeletSoonAfter() async throws {
        func waited(proving: Bool) async throws -> (ended: Bool, marked: String?) {
            let clock = FixedClock()
            let cluster = FakeCluster()
            try cluster.seed(
                KubeObject(
                    apiVersion: "apps/v1", kind: "Deployment", name: "x", namespace: "ns", labels: [("app", "x")],
                    body: [
                        ("spec", .map([("replicas", .int(1))])),
                        (
                            "status",
                            .map([("replicas", .int(1)), ("updatedReplicas", .int(1)), ("availableReplicas", .int(0))])
                        ),
                    ]))
            try cluster.seed(Self.pod("x-1", age: 0.1, ready: false, probe: true, clock: clock))
            let t = try TempDir("so-waiter")
            defer { _ = t }
            let ctx = SoContext(
                fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
                entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
            var waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
            let confirmation = ReadyConfirmation()
            waiter.confirmation = confirmation
            if proving { await confirmation.confirm(pod: "x-1", container: "c") }
            let objects = [KubeObject(apiVersion: "apps/v1", kind: "Deployment", name: "x", namespace: "ns", body: [])]
            var ended = true
            do {
                try await waiter.wait(for: objects, timeout: 0.35, progress: ProgressReporter(ctx: ctx, mode: .plain))
            } catch let e as SoError where e.exitCode == SoError.exitTimeout {
                ended = false
            }
            return (ended, cluster.object("Pod", "x-1", namespace: "ns")?.annotations[KubeletNudge.annotation])
        }
        let proved = try await waited(proving: true)
        #expect(!proved.ended)
        #expect(proved.marked?.hasPrefix("c@") == true, "\(String(describing: proved.marked))")
        let unproved = try await waited(proving: false)
        #expect(!unproved.ended && unproved.marked == nil, "\(String(describing: unproved.marked))")
    }

    /// A busy kubelet reports a start late and an exit later still: a container this wait saw before it ran
    /// and whose start was reported 9 s after its startedAt is watched a round and the (capped) lateness
    /// before it is believed; one running since long before the wait's first look is believed at once, and so
    /// is one whose probe answered.
    @Test func aStartReportedLateIsWatchedLongerBeforeItIsBelieved() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        for (name, age, probe) in [("late-report", 10.0, false), ("probed", 10.0, true), ("old", 60.0, false)] {
            try cluster.seed(Self.pod(name, age: age, probe: probe, clock: clock))
        }
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(),
            console: CapturedConsole(), environment: [:], builtInRoot: nil)
        let waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        var seen = ContainerEvidence()
        seen.notRunning(pod: "late-report", container: "c")
        let pods = try await waiter.listPods()
        let first = waiter.containerHealth(pods, evidence: &seen)
        #expect(first.young == ["pod late-report container c"])
        // The next look can be when it is believed, to the instant.
        let whole = ContainerEvidence.reportSeconds + ContainerEvidence.lateAtMost
        #expect(abs(first.believedIn - whole) < 0.001, "\(first.believedIn)")
        try await clock.sleep(seconds: whole - 0.1)
        let later = waiter.containerHealth(pods, evidence: &seen)
        #expect(later.young == ["pod late-report container c"] && abs(later.believedIn - 0.1) < 0.001)
        try await clock.sleep(seconds: 0.1)
        let believed = waiter.containerHealth(pods, evidence: &seen)
        #expect(believed.young.isEmpty && believed.believedIn == .infinity)
    }
}

/// A container that exits right after it started may count as available for an instant: start looks
/// again a moment later and names it, with its last log lines, instead of reporting success.
@Suite struct CrashAfterAvailableTests {
    @Test func aContainerThatExitsAfterTheRolloutIsNamed() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        var pod = KubeObject(
            apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: ns,
            labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)], body: [])
        pod.body = [
            (
                "status",
                .map([
                    (
                        "containerStatuses",
                        .list([
                            .map([
                                ("name", .string("web")), ("ready", .bool(false)), ("restartCount", .int(1)),
                                ("image", .string("nginx:1.27-alpine")),
                                ("state", .map([("waiting", .map([("reason", .string("CrashLoopBackOff"))]))])),
                            ])
                        ])
                    )
                ])
            )
        ]
        try c.cluster.seed(pod)
        c.cluster.podLogs["\(ns)/web-abc/web"] = "listening\nfatal: cannot open /var/lib/web/db\n"
        await #expect { _ = try await c.start() } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("container web keeps crashing (CrashLoopBackOff)")
                && m.contains("fatal: cannot open /var/lib/web/db")
        }
    }
}

/// A pod the kubelet evicted (the node short of disk) stays listed, Failed, while its ReplicaSet makes another: it is
/// not a container "restarting", and what is said names the node's shortage (the CI run of stop 71: a workspace's
/// pods evicted at 2 GB free, reported for 240 s as "(exited, restarting)").
@Suite struct EvictedPodTests {
    static let lowDisk =
        "The node was low on resource: ephemeral-storage. Threshold quantity: 2705531679, available: 2129556Ki. "
        + "Container egress-proxy was using 196Ki, request is 0, has larger consumption of ephemeral-storage. "

    /// A pod of `ns`'s deployment (labels app=x, one container `c`) with `status`.
    static func pod(_ name: String, status: [(String, YValue)]) -> KubeObject {
        KubeObject(
            apiVersion: "v1", kind: "Pod", name: name, namespace: "ns", labels: [("app", "x")],
            body: [
                (
                    "spec",
                    .map([("containers", .list([.map([("name", .string("c")), ("image", .string("busybox"))])]))])
                ),
                ("status", .map(status)),
            ])
    }

    /// One condition of a pod's status.
    static func condition(_ type: String, _ fields: [(String, String)]) -> YValue {
        .map(
            [("type", .string(type)), ("status", .string(type == "PodScheduled" ? "False" : "True"))]
                + fields.map { ($0.0, .string($0.1)) })
    }

    /// An evicted pod, its container ended by the eviction `ago` seconds before the clock's now.
    static func evicted(_ name: String, ago: Double, clock: FixedClock) -> KubeObject {
        let at = Timestamps.rfc3339(clock.now().addingTimeInterval(-ago))
        let ended: YValue = .map([
            ("name", .string("c")), ("ready", .bool(false)), ("restartCount", .int(0)),
            ("state", .map([("terminated", .map([("exitCode", .int(137)), ("reason", .string("Error"))]))])),
        ])
        return pod(
            name,
            status: [
                ("phase", .string("Failed")), ("reason", .string("Evicted")), ("message", .string(lowDisk)),
                (
                    "conditions",
                    .list([
                        condition("DisruptionTarget", [("reason", "TerminationByKubelet"), ("lastTransitionTime", at)])
                    ])
                ),
                ("containerStatuses", .list([ended])),
            ])
    }

    /// Its replacement, which the scheduler cannot place while the node carries the disk-pressure taint.
    static func held(_ name: String) -> KubeObject {
        pod(
            name,
            status: [
                ("phase", .string("Pending")),
                (
                    "conditions",
                    .list([
                        condition(
                            "PodScheduled",
                            [
                                ("reason", "Unschedulable"),
                                (
                                    "message",
                                    "0/1 nodes are available: 1 node(s) had untolerated taint "
                                        + "{node.kubernetes.io/disk-pressure: }."
                                ),
                            ])
                    ])
                ),
            ])
    }

    static func waiter(_ cluster: FakeCluster, clock: FixedClock) throws -> Waiter {
        let t = try TempDir("so-waiter")
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
        return Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
    }

    @Test func anEvictedPodIsNotRestartingAndTheNodesShortageIsNamed() async throws {
        let clock = FixedClock()
        let cluster = FakeCluster()
        try cluster.seed(Self.evicted("web-old", ago: 5, clock: clock))
        try cluster.seed(Self.held("web-new"))
        let waiter = try Self.waiter(cluster, clock: clock)
        let pods = try await waiter.listPods()
        var seen = ContainerEvidence()
        let health = waiter.containerHealth(pods, evidence: &seen)
        #expect(health.restarting.isEmpty)
        #expect(health.young.isEmpty)
        #expect(Waiter.beliefKeys(pods).isEmpty)
        let problems = try await waiter.diagnose(pods: pods)
        #expect(
            problems.map(\.message) == [
                "pod ns/web-new cannot be scheduled: 0/1 nodes are available: 1 node(s) had untolerated taint "
                    + "{node.kubernetes.io/disk-pressure: }.",
                "pod ns/web-old was evicted: " + Self.lowDisk.trimmingCharacters(in: .whitespaces),
            ])
        #expect(problems.allSatisfy { $0.hint.hasPrefix("the node is short of disk space: free some on it") })
        // Both said on the status line while waiting; neither ends the wait (the node may get its room back).
        #expect(problems.allSatisfy { $0.shown && !$0.fatal })
        // An eviction long past is no longer news.
        let old = FakeCluster()
        try old.seed(Self.evicted("web-old", ago: Waiter.evictionShown + 1, clock: clock))
        let oldWaiter = try Self.waiter(old, clock: clock)
        #expect(try await oldWaiter.diagnose(pods: try await oldWaiter.listPods()).isEmpty)
    }

    /// `so deployment ps` says Evicted, as kubectl's STATUS column does, not Failed.
    @Test func psSaysEvicted() throws {
        let pod = try JSON.parse(Data(Self.evicted("web-old", ago: 5, clock: FixedClock()).json().utf8))
        #expect(ObserveAction.podInfo(pod).phase == "Evicted")
    }

    /// A container that keeps exiting says how it last ended.
    @Test func aRestartingContainerSaysHowItEnded() {
        func status(_ reason: String?, _ code: Int) -> JSON {
            var ended: [String: JSON] = ["exitCode": .number(Double(code))]
            if let reason { ended["reason"] = .string(reason) }
            return .object(["lastState": .object(["terminated": .object(ended)])])
        }
        #expect(Waiter.exitWords(status("OOMKilled", 137)) == "killed for memory (OOMKilled)")
        #expect(Waiter.exitWords(status("Error", 1)) == "exited 1")
        #expect(Waiter.exitWords(status(nil, 2)) == "exited 2")
        #expect(Waiter.exitWords(status("ContainerCannotRun", 128)) == "exited 128 (ContainerCannotRun)")
        #expect(Waiter.exitWords(.object([:])) == "exited")
    }
}

/// "started" means the new version is what answers: the rollout is complete as `kubectl rollout status` says it,
/// and a Job as its own status says it.
@Suite struct RolloutCompleteTests {
    static func deployment(
        generation: Int = 2, observed: Int = 2, want: Int = 1, replicas: Int, updated: Int, available: Int,
        terminating: Int? = nil
    ) -> JSON {
        var status: [String: JSON] = [
            "observedGeneration": .number(Double(observed)), "replicas": .number(Double(replicas)),
            "updatedReplicas": .number(Double(updated)), "availableReplicas": .number(Double(available)),
        ]
        if let terminating { status["terminatingReplicas"] = .number(Double(terminating)) }
        return .object([
            "metadata": .object(["name": .string("web"), "generation": .number(Double(generation))]),
            "spec": .object([
                "replicas": .number(Double(want)),
                "selector": .object(["matchLabels": .object(["app": .string("d1"), "component": .string("web")])]),
            ]),
            "status": .object(status),
        ])
    }

    /// The moment the issue met: the new pod created, the old one still available. Its availability is not the
    /// new version's.
    @Test func anOldReplicaSetsAvailabilityDoesNotCountForTheNewVersion() {
        #expect(
            Waiter.deploymentPending(Self.deployment(replicas: 2, updated: 1, available: 1))
                == "rolling out (1 old replica left)")
        #expect(
            Waiter.deploymentPending(Self.deployment(want: 2, replicas: 3, updated: 1, available: 2))
                == "rolling out (1 of 2 updated)")
        #expect(
            Waiter.deploymentPending(Self.deployment(observed: 1, replicas: 1, updated: 1, available: 1))
                == "rollout not observed yet")
        #expect(
            Waiter.deploymentPending(Self.deployment(replicas: 1, updated: 1, available: 1, terminating: 1))
                == "rolling out (1 old replica left)")
        #expect(Waiter.deploymentPending(Self.deployment(replicas: 1, updated: 1, available: 0)) == "0/1 available")
        #expect(Waiter.deploymentPending(Self.deployment(replicas: 1, updated: 1, available: 1)) == nil)
        #expect(Waiter.deploymentPending(Self.deployment(want: 0, replicas: 0, updated: 0, available: 0)) == nil)
    }

    static func pod(_ name: String, labels: [String: String], ending: Bool) -> JSON {
        var meta: [String: JSON] = [
            "name": .string(name), "labels": .object(labels.mapValues { .string($0) }),
        ]
        if ending { meta["deletionTimestamp"] = .string("2026-11-26T05:00:00Z") }
        return .object(["metadata": .object(meta)])
    }

    /// A pod of the Deployment still ending (where the status does not count it) keeps the rollout open; one of
    /// another Deployment, or one running, does not.
    @Test func aPodStillEndingKeepsTheRolloutOpen() {
        let d = Self.deployment(replicas: 1, updated: 1, available: 1)
        let mine = ["app": "d1", "component": "web", "pod-template-hash": "old"]
        #expect(
            Waiter.podsEnding(d, pods: [Self.pod("web-old", labels: mine, ending: true)])
                == "rolling out (1 old pod ending)")
        #expect(Waiter.podsEnding(d, pods: [Self.pod("web-new", labels: mine, ending: false)]) == nil)
        #expect(
            Waiter.podsEnding(
                d, pods: [Self.pod("db-old", labels: ["app": "d1", "component": "db"], ending: true)]) == nil)
    }

    /// A Job the kubelet says succeeded is not done until the Job controller counts it Complete: a reader that
    /// runs `kubectl wait --for=condition=complete --timeout=0` right after start must be told "complete".
    @Test func aJobIsDoneOnlyWhenItsOwnStatusSaysComplete() async throws {
        let c = try await ClusterHarness(healthy: false)
        let clock = FixedClock()
        var ctx = c.ctx
        ctx.clock = clock
        let job = "\(c.id)-job-example-migrate"
        let waiter = Waiter(ctx: ctx, client: c.cluster, namespace: c.id, selector: "app=\(c.id)")
        try c.cluster.seed(
            KubeObject(apiVersion: "batch/v1", kind: "Job", name: job, namespace: c.id, labels: [("app", c.id)]))
        c.cluster.update("Job", job, namespace: c.id) { j in
            guard case .object(var o) = j else { return }
            o["status"] = .object(["succeeded": .number(1)])
            j = .object(o)
        }
        var pods: [JSON]? = []
        let (pending, _) = try await waiter.pendingWorkloads(deployments: [], jobs: [job], pods: &pods)
        #expect(pending == ["Job \(job) (succeeded, not yet counted complete)"])
        c.cluster.update("Job", job, namespace: c.id) { j in
            guard case .object(var o) = j else { return }
            o["status"] = .object([
                "succeeded": .number(1),
                "conditions": .array([.object(["type": .string("Complete"), "status": .string("True")])]),
            ])
            j = .object(o)
        }
        let (after, _) = try await waiter.pendingWorkloads(deployments: [], jobs: [job], pods: &pods)
        #expect(after.isEmpty)
    }
}

/// The wait's last look: a request right after start goes where the Services' EndpointSlices say, so the wait ends
/// only once they list every Ready pod and no pod that is gone.
@Suite struct EndpointsAgreeTests {
    @Test func aServiceWhoseSlicesStillNameTheOldPodIsWaitedFor() async throws {
        let cluster = FakeCluster()
        let ctx = try Harness(environment: [:]).ctx
        let labels = [("app", "x")]
        try cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Service", name: "web", namespace: "ns", labels: labels,
                body: [("spec", .map([("selector", .map([("app", .string("x")), ("component", .string("web"))]))]))]))
        func slice(_ pod: String) throws {
            try cluster.seed(
                KubeObject(
                    apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", name: "web-abc", namespace: "ns",
                    labels: labels + [("kubernetes.io/service-name", "web")],
                    body: [
                        ("addressType", .string("IPv4")),
                        (
                            "endpoints",
                            .list([
                                .map([
                                    ("addresses", .list([.string("10.0.0.9")])),
                                    ("conditions", .map([("ready", .bool(true))])),
                                    ("targetRef", .map([("kind", .string("Pod")), ("name", .string(pod))])),
                                ])
                            ])
                        ),
                    ]))
        }
        let pod = JSON.object([
            "metadata": .object([
                "name": .string("web-new"),
                "labels": .object(["app": .string("x"), "component": .string("web")]),
            ]),
            "status": .object([
                "podIP": .string("10.0.0.9"),
                "conditions": .array([.object(["type": .string("Ready"), "status": .string("True")])]),
            ]),
        ])
        let waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
        try slice("web-old")
        #expect(try await waiter.endpointsBehind([pod]) == "Service web (endpoints not yet updated)")
        try slice("web-new")
        #expect(try await waiter.endpointsBehind([pod]) == nil)
    }

    /// A pod pinned by its volume to a node that is still joining (a new kind worker) waits, saying why on the status
    /// line; the same node long after it joined stops the wait at once, saying the node is not ready.
    @Test func aPodWhoseVolumeIsOnAJoiningNodeWaits() async throws {
        let cluster = try VolumeNodeCheckTests.cluster(nodes: [("w", .map([]))], pinnedTo: ["w"])
        cluster.update("Node", "w", namespace: nil) { n in
            guard case .object(var o) = n else { return }
            o["status"] = .object([
                "conditions": .array([.object(["type": .string("Ready"), "status": .string("False")])])
            ])
            n = .object(o)
        }
        var pod = VolumeNodeCheckTests.pod.object
        pod["status"] = .object([
            "conditions": .array([
                .object(["type": .string("PodScheduled"), "status": .string("False"), "message": .string("x")])
            ])
        ])
        let t = try TempDir("so-waiter")
        for (at, fatal) in [("2026-01-01T00:00:20Z", false), ("2026-01-01T01:00:00Z", true)] {
            let ctx = SoContext(
                fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(),
                clock: FixedClock(Timestamps.parse(at)!), entropy: SeededEntropy(), console: CapturedConsole(),
                environment: [:], builtInRoot: nil)
            let waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
            let problems = try await waiter.diagnose(pods: [.object(pod)])
            #expect(problems.count == 1, "\(problems.map(\.message))")
            #expect(problems.first?.fatal == fatal)
            #expect(problems.first?.shown == true)
            #expect(
                problems.first?.message
                    == (fatal
                        ? "pod ns/p cannot run: its volume data is on w, which is not ready"
                        : "pod ns/p waits: its volume data is on w, which is still joining the cluster (not ready yet)")
            )
        }
    }
}
