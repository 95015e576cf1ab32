import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// One start at a time per deployment: the Lease, who holds it, when it is taken over, and that it is
/// given up on every path.
@Suite struct DeploymentLockTests {
    @Test func anotherRunHoldingTheLockIsNamed() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let now = Timestamps.microTime(c.ctx.clock.now())
        try c.cluster.seed(
            KubeObject(
                apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                body: [
                    (
                        "spec",
                        .map([
                            ("holderIdentity", .string("ci-runner:42:abcd")), ("leaseDurationSeconds", .int(360)),
                            ("acquireTime", .string(now)), ("renewTime", .string(now)),
                        ])
                    )
                ]))
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").contains("is being changed by another so run (ci-runner:42:abcd)")
        }
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply Deployment") })
        // A lock whose holder died expires.
        try await c.ctx.clock.sleep(seconds: 400)
        _ = try await c.start()
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }

    @Test func aLockLeftByADeadRunOnThisHostIsTakenOver() async throws {
        let c = try await ClusterHarness()
        var ctx = c.ctx
        ctx.hostName = "laptop"
        ctx.isProcessAlive = { $0 != 4242 }
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let now = Timestamps.microTime(c.ctx.clock.now())
        for (holder, blocks) in [("laptop:4243:beef", true), ("other:4242:beef", true), ("laptop:4242:beef", false)] {
            try c.cluster.seed(
                KubeObject(
                    apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                    body: [
                        (
                            "spec",
                            .map([
                                ("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(360)),
                                ("acquireTime", .string(now)), ("renewTime", .string(now)),
                            ])
                        )
                    ]))
            var failed = false
            do {
                _ = try await StartAction(ctx).run(
                    StartRequest(directory: "dep", cluster: c.options, timeout: 30, progress: .plain))
            } catch { failed = true }
            #expect(failed == blocks, "\(holder)")
        }
        #expect(
            c.h.console.stderr.contains("taking over the lock")
                || ctx.diagnostics.all.contains {
                    $0.message.contains("taking over the lock of an earlier so run (laptop:4242:beef)")
                })
    }

    /// Two starts of one deployment at once, the second beginning while the first waits for the workloads
    /// in the namespace the first created: the second, whether it would change something (here a config
    /// edit) or nothing, waits for the first's Lease, then fails naming it, having written nothing (its
    /// Lease's create refused is its only write; it reads nothing of the deployment).
    @Test(arguments: [true, false]) func twoStartsAtOnceDoNotInterleave(secondChanges: Bool) async throws {
        let c = try await ClusterHarness()
        final class Second: @unchecked Sendable {
            var error: Error?
            var calls: ArraySlice<String> = []
            var started = false
        }
        let second = Second()
        let cluster = c.cluster
        cluster.beforeCallAsync = { call in
            // The first list of Deployments is the wait's (a namespace this start created is not listed).
            guard call.hasPrefix("list Deployment"), !second.started else { return }
            second.started = true
            if secondChanges {
                try? c.h.tmp.write("dep/config.env", ((try? c.h.read("dep/config.env")) ?? "") + "NEW_SETTING=on\n")
            }
            let before = cluster.calls.count
            do { _ = try await c.start() } catch { second.error = error }
            second.calls = cluster.calls[before...]
        }
        _ = try await c.start()
        #expect(second.started)
        #expect(
            !second.calls.contains {
                $0.hasPrefix("apply") || $0.hasPrefix("delete") || $0.hasPrefix("update") || $0.hasPrefix("patch")
            }, "\(second.calls)")
        #expect(second.calls.contains("create Lease \(c.id)/so-deployment-lock"), "\(second.calls)")
        #expect(!second.calls.contains { $0.hasPrefix("list") || $0.hasPrefix("get Secret") }, "\(second.calls)")
        let message = (second.error as? SoError)?.message ?? ""
        #expect(
            message.contains("deployment \(c.id) is being changed by another so run (localhost:\(getpid()):"),
            "\(message)")
        // The first finished and gave the lock up.
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }

    /// Two first starts at the same moment, this one's namespace create first: the other run takes the Lease
    /// between this run's two creates, then writes the record's first revision and the generated secrets. This
    /// run's Lease create is refused; the other run is done either before this run reads the Lease (`released`:
    /// the Lease is gone, and this run makes it) or while this run waits for it. Either way this run reads what
    /// the other wrote, as a start in a namespace it did not make. Before: it took the namespace for one it had
    /// just made, so empty, read neither, and its record's write was refused as "another writer made revision
    /// 1" (seen in CI, 2026-11-28; the `released` case remained after the first fix).
    @Test(arguments: [true, false]) func aRunThatTookTheLeaseBetweenThisRunsTwoCreatesIsRead(released: Bool)
        async throws
    {
        let c = try await ClusterHarness(config: ["SESSION=$generate:hex:16$"])
        let cluster = c.cluster
        let (lease, secret) = ("so-deployment-lock", "\(c.id)-generated-secrets")
        final class Other: @unchecked Sendable {
            @TaskLocal static var running = false
            var task: Task<StartReport, Error>?
            var leaseReads = 0
        }
        let other = Other()
        cluster.beforeCallAsync = { call in
            guard !Other.running else { return }
            if call == "create Lease \(c.id)/\(lease)", other.task == nil {
                other.task = Task { try await Other.$running.withValue(true) { try await c.start() } }
                // Go on once the other run holds the Lease.
                var turns = 0
                while cluster.object("Lease", lease, namespace: c.id) == nil, turns < 100_000 {
                    turns += 1
                    await Task.yield()
                }
            } else if call.hasPrefix("get Lease"), let task = other.task {
                // The first read is the refused create's; the next are the wait's (its clock is the fake's, so
                // it does not pass real time: the other run is let finish there).
                other.leaseReads += 1
                if released || other.leaseReads == 2 { _ = try? await task.value }  // its outcome is checked below
            }
        }
        _ = try await c.start()
        let first = try #require(other.task)
        _ = try await first.value
        #expect(other.leaseReads >= (released ? 1 : 2), "\(cluster.calls)")
        // This run read what the other wrote (the record's heads, the namespace, the generated secret): the
        // same deployment, so nothing changed and no revision 2.
        let heads = "list Secret \(c.id) so.dev/record-of=\(c.id),so.dev/record-part=head"
        for read in [heads, "get Namespace \(c.id)", "get Secret \(c.id)/\(secret)"] {
            #expect(cluster.calls.filter { $0 == read }.count >= 2, "\(read): \(cluster.calls)")
        }
        let records = try await RecordStore(client: cluster, namespace: c.id, deployment: c.id).heads()
        #expect(records.map(\.revision) == [1], "\(records)")
    }

    /// Two first starts at the same moment: the other run's namespace create lands first. This one's is
    /// refused, and it puts its Lease in the namespace the other made (before, it failed with the API server's
    /// 'namespaces "x" not found'). The same when the Lease's create is still refused for want of the namespace
    /// (an API server whose cache is not in step): the namespace is made again if need be, and the Lease goes in it.
    @Test func aNamespaceAnotherFirstStartMadeAtTheSameMomentTakesTheLease() async throws {
        for goneAgain in [false, true] {
            let c = try await ClusterHarness()
            let cluster = c.cluster
            final class Raced: @unchecked Sendable { var done = false }
            let raced = Raced()
            cluster.beforeCallAsync = { call in
                guard call == "create Namespace \(c.id)", !raced.done else { return }
                raced.done = true
                try? cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id))
                if goneAgain { cluster.failures["create Lease"] = SoError("namespaces \"\(c.id)\" not found") }
            }
            if goneAgain {
                cluster.beforeCall = { call in
                    guard call == "create Namespace \(c.id)", cluster.failures["create Lease"] != nil else { return }
                    cluster.failures["create Lease"] = nil
                }
            }
            _ = try await c.start()
            #expect(raced.done)
            let lockCalls = cluster.calls.filter { $0.contains("Lease") || $0.hasPrefix("create Namespace") }
            let namespace = "create Namespace \(c.id)"
            let lease = "create Lease \(c.id)/so-deployment-lock"
            #expect(
                Array(lockCalls.prefix(goneAgain ? 4 : 2))
                    == (goneAgain ? [namespace, lease, namespace, lease] : [namespace, lease]), "\(lockCalls)")
            #expect(cluster.calls.contains { $0.hasPrefix("apply Deployment") })
        }
    }

    /// A user who may not create namespaces starts in one that exists: the refused create is passed over and
    /// the Lease taken in it.
    @Test func aUserWhoMayNotCreateNamespacesStartsInOneThatExists() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        c.cluster.failures["create Namespace"] = SoError("namespaces is forbidden: User \"dev\" cannot create resource")
        let before = c.cluster.calls.count
        _ = try await c.start()
        let calls = Array(c.cluster.calls[before...])
        #expect(Array(calls.prefix(2)) == ["create Namespace \(c.id)", "create Lease \(c.id)/so-deployment-lock"])
        #expect(calls.last == "delete Lease \(c.id)/so-deployment-lock", "\(calls)")
    }

    /// Another run changes what the deployment owns just before a start takes its lock: an object it added
    /// is pruned and one it changed is applied again, as the start reads what it owns under the lock.
    @Test func applyAndPruneGoByAReadMadeUnderTheLock() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let (cluster, id) = (c.cluster, c.id)
        let service = try #require(cluster.all.first { $0.0.type.kind == "Service" && $0.0.namespace == id }?.0.name)
        // A change of config makes the next start take the lock; the other run acts just before it does.
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        let hash = KubeObject.appliedHashAnnotation
        cluster.beforeCall = { call in
            guard call == "create Lease \(id)/so-deployment-lock" else { return }
            try? cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "ConfigMap", name: "left-by-another-run", namespace: id,
                    labels: [("app", id), ("app.kubernetes.io/instance", id), ("app.kubernetes.io/managed-by", "so")]))
            cluster.update("Service", service, namespace: id) { svc in
                guard case .object(var o) = svc, case .object(var meta)? = o["metadata"] else { return }
                meta["annotations"] = .object([hash: .string("another-run")])
                o["metadata"] = .object(meta)
                svc = .object(o)
            }
        }
        let report = try await c.start()
        cluster.beforeCall = nil
        #expect(report.pruned.contains("ConfigMap left-by-another-run"), "\(report.pruned)")
        #expect(cluster.object("ConfigMap", "left-by-another-run", namespace: id) == nil)
        #expect(report.applied.contains("Service \(id)/\(service)"), "\(report.applied)")
        #expect(cluster.object("Service", service, namespace: id)?.annotations[hash] != "another-run")
    }

    /// SIGINT in the middle of a start: the lock is given up before `so` exits.
    @Test func anInterruptedStartGivesTheLockUp() async throws {
        let c = try await ClusterHarness()
        final class Record: @unchecked Sendable {
            var codes: [Int32] = []
            var leaseAtExit: JSON?
            var leaseBefore: JSON?
            var interrupted = false
        }
        let record = Record()
        let cluster = c.cluster
        let id = c.id
        let interrupts = Interrupts(terminate: { code in
            record.codes.append(code)
            record.leaseAtExit = cluster.object("Lease", "so-deployment-lock", namespace: id)
        })
        var ctx = c.ctx
        ctx.interrupts = interrupts
        // What is tested is that the release runs before the exit, not how soon a loaded machine schedules it.
        ctx.interruptReleaseSeconds = 120
        cluster.beforeCallAsync = { call in
            guard call.hasPrefix("apply Deployment"), !record.interrupted else { return }
            record.interrupted = true
            record.leaseBefore = cluster.object("Lease", "so-deployment-lock", namespace: id)
            // As the signal thread does: off the task's thread, which stays free for the release.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread {
                    interrupts.interrupt(signal: SIGINT)
                    done.resume()
                }.start()
            }
        }
        _ = try? await ClusterHarness(copying: c, ctx: ctx).start()
        #expect(record.codes == [130])
        #expect(record.leaseBefore != nil)
        #expect(record.leaseAtExit == nil)
    }

    @Test func anExpiredLockIsTakenOverByCompareAndSwapAndARacingRunLoses() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let long = Timestamps.microTime(c.ctx.clock.now().addingTimeInterval(-3600))
        func seedExpired() throws {
            try c.cluster.seed(
                KubeObject(
                    apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                    body: [
                        (
                            "spec",
                            .map([
                                ("holderIdentity", .string("ci-runner:42:abcd")), ("leaseDurationSeconds", .int(60)),
                                ("acquireTime", .string(long)), ("renewTime", .string(long)),
                            ])
                        )
                    ]))
        }
        // Another run takes the expired lock between our read and our update: we lose, wait for it (up to the
        // start's timeout) naming it, and apply nothing.
        try seedExpired()
        let cluster = c.cluster
        let now = Timestamps.microTime(c.ctx.clock.now())
        cluster.beforeCall = { call in
            guard call.hasPrefix("update Lease") else { return }
            cluster.update("Lease", "so-deployment-lock", namespace: c.id) { lease in
                guard case .object(var o) = lease, case .object(var meta)? = o["metadata"] else { return }
                meta["resourceVersion"] = .string("racer")
                o["metadata"] = .object(meta)
                o["spec"] = .object([
                    "holderIdentity": .string("racer:1:beef"), "leaseDurationSeconds": .number(3600),
                    "acquireTime": .string(now), "renewTime": .string(now),
                ])
                lease = .object(o)
            }
        }
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").contains("is being changed by another so run (racer:1:beef)")
        }
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply Deployment") })
        // Without a racer the expired lock is taken over (create refused, read, update) and released at the end.
        cluster.beforeCall = nil
        try seedExpired()
        let before = c.cluster.calls.count
        _ = try await c.start()
        let lockCalls = c.cluster.calls[before...].filter { $0.contains("Lease") }
        #expect(
            Array(lockCalls) == [
                "create Lease \(c.id)/so-deployment-lock", "get Lease \(c.id)/so-deployment-lock",
                "update Lease \(c.id)/so-deployment-lock", "delete Lease \(c.id)/so-deployment-lock",
            ])
    }

    static func leaseLock(_ c: ClusterHarness, namespace: String) -> DeploymentLock {
        DeploymentLock(
            ctx: c.ctx, client: c.cluster, namespace: namespace, name: "so-deployment-lock", labels: [],
            subject: "deployment x is being changed",
            duration: 30)
    }

    /// The holder renews its Lease (a compare-and-swap on its last write, the renewTime moved on); once
    /// another run has taken the Lease over, it neither renews nor releases it, and says so.
    @Test func theHolderRenewsAndNeverRemovesALeaseTakenOver() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns"))
        let lock = Self.leaseLock(c, namespace: "ns")
        try await lock.acquire()
        let first = try #require(c.cluster.object("Lease", "so-deployment-lock", namespace: "ns"))
        try await c.ctx.clock.sleep(seconds: 40)
        #expect(await lock.renew())
        let renewed = try #require(c.cluster.object("Lease", "so-deployment-lock", namespace: "ns"))
        #expect(renewed.at("spec", "renewTime") != first.at("spec", "renewTime"))
        #expect(renewed.at("spec", "acquireTime") == first.at("spec", "acquireTime"))
        #expect(renewed.at("spec", "holderIdentity")?.string == lock.holder)
        // Another run takes it over (it expired): the next renewal finds the Lease changed, and stops.
        c.cluster.update("Lease", "so-deployment-lock", namespace: "ns") { lease in
            guard case .object(var o) = lease, case .object(var meta)? = o["metadata"],
                case .object(var spec)? = o["spec"]
            else { return }
            meta["resourceVersion"] = .string("other-run")
            spec["holderIdentity"] = .string("ci-runner:7:beef")
            o["metadata"] = .object(meta)
            o["spec"] = .object(spec)
            lease = .object(o)
        }
        #expect(await lock.renew() == false)
        #expect(c.ctx.diagnostics.all.contains { $0.message.contains("was taken over by another so run") })
        await lock.release()
        #expect(
            c.cluster.object("Lease", "so-deployment-lock", namespace: "ns")?.at("spec", "holderIdentity")?.string
                == "ci-runner:7:beef")
        #expect(!c.cluster.calls.contains { $0.hasPrefix("delete") }, "\(c.cluster.calls)")
    }

    /// The renewer renews on its period of real time until the lock is given up (tests run it on a short
    /// period: `renewsLocks` is off in their context, so a loaded machine adds no write to what they count).
    @Test func theRenewerRenewsUntilTheRelease() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns"))
        let lock = Self.leaseLock(c, namespace: "ns")
        try await lock.acquire()
        lock.hold.setRenewer(lock.renewing(every: 0.01))
        let renewals = { c.cluster.calls.filter { $0 == "update Lease ns/so-deployment-lock" }.count }
        for _ in 0..<500 where renewals() < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(renewals() >= 2)
        await lock.release()
        let after = renewals()
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(renewals() == after && c.cluster.object("Lease", "so-deployment-lock", namespace: "ns") == nil)
    }

    /// The release is a delete on the holder's last resourceVersion: a Lease another run holds now is kept.
    @Test func theReleaseDeletesOnlyTheHoldersOwnWrite() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns"))
        let mine = Self.leaseLock(c, namespace: "ns")
        try await mine.acquire()
        // Another run took it over (as after an expiry this run did not notice): its Lease stays.
        c.cluster.update("Lease", "so-deployment-lock", namespace: "ns") { lease in
            guard case .object(var o) = lease, case .object(var meta)? = o["metadata"],
                case .object(var spec)? = o["spec"]
            else { return }
            meta["resourceVersion"] = .string("someone-else")
            spec["holderIdentity"] = .string("ci-runner:7:beef")
            o["metadata"] = .object(meta)
            o["spec"] = .object(spec)
            lease = .object(o)
        }
        await mine.release()
        #expect(c.cluster.calls.suffix(2) == ["delete Lease ns/so-deployment-lock", "get Lease ns/so-deployment-lock"])
        #expect(
            c.cluster.object("Lease", "so-deployment-lock", namespace: "ns")?.at("spec", "holderIdentity")?.string
                == "ci-runner:7:beef")
        // Unchanged since its own write, it goes.
        let again = Self.leaseLock(c, namespace: "ns2")
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "ns2"))
        try await again.acquire()
        await again.release()
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: "ns2") == nil)
    }

    /// Two starts on one cluster that both need the ingress controller: the second, beginning while the
    /// first checks the controller, waits on the cluster's lock and then finds it ready: one install.
    @Test func twoRunsInstallTheIngressControllerOnce() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "kube-system"))
        let cluster = c.cluster
        let ctx = c.ctx
        final class Second: @unchecked Sendable {
            var task: Task<Void, Error>?
            var launched = false
        }
        let second = Second()
        @Sendable func install() async throws {
            let progress = ProgressReporter(ctx: ctx, mode: .plain)
            _ = try await DeploymentLock.cluster(ctx: ctx, client: cluster, duration: 30).holding(
                waiting: 3600, progress: progress
            ) {
                try await IngressInstaller(ctx: ctx, client: cluster).ensure(
                    image: nil, acmeEmail: nil, timeout: 30, progress: progress)
            }
        }
        cluster.beforeCallAsync = { call in
            guard call == "get Deployment caddy-system/caddy-ingress-controller", !second.launched else { return }
            second.launched = true
            let before = cluster.calls.count
            second.task = Task { try await install() }
            // Go on once the second run has met the lock.
            for _ in 0..<10_000 where !cluster.calls[before...].contains("get Lease kube-system/so-cluster-lock") {
                await Task.yield()
            }
        }
        try await install()
        try await second.task?.value
        #expect(second.launched)
        let installs = cluster.calls.filter { $0 == "apply Deployment caddy-system/caddy-ingress-controller" }
        #expect(installs.count == 1, "\(cluster.calls)")
        #expect(cluster.calls.filter { $0 == "create Lease kube-system/so-cluster-lock" }.count >= 3)
        #expect(cluster.object("Lease", "so-cluster-lock", namespace: "kube-system") == nil)
    }
}
