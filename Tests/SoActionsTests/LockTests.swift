import Foundation
import Testing
@testable import SoActions
import SoBasics
import SoKube
import SoTestSupport

/// One start at a time per deployment: the Lease, who holds it, when it is taken over, and that it is
/// given up on every path.
@Suite struct DeploymentLockTests {
    @Test func anotherRunHoldingTheLockIsNamed() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let now = Timestamps.microTime(c.ctx.clock.now())
        try c.cluster.seed(KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                                      body: [("spec", .map([("holderIdentity", .string("ci-runner:42:abcd")), ("leaseDurationSeconds", .int(360)),
                                                            ("acquireTime", .string(now)), ("renewTime", .string(now))]))]))
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
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let now = Timestamps.microTime(c.ctx.clock.now())
        for (holder, blocks) in [("laptop:4243:beef", true), ("other:4242:beef", true), ("laptop:4242:beef", false)] {
            try c.cluster.seed(KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                                          body: [("spec", .map([("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(360)),
                                                                ("acquireTime", .string(now)), ("renewTime", .string(now))]))]))
            var failed = false
            do { _ = try await StartAction(ctx).run(StartRequest(directory: "dep", cluster: c.options, timeout: 30, progress: .plain)) } catch { failed = true }
            #expect(failed == blocks, "\(holder)")
        }
        #expect(c.h.console.stderr.contains("taking over the lock") || ctx.diagnostics.all.contains { $0.message.contains("taking over the lock of an earlier so run (laptop:4242:beef)") })
    }

    /// Two starts of one deployment at once, the second beginning while the first waits for the workloads
    /// in the namespace the first created: a second start that would change something (here a config
    /// edit) fails naming the first and writes nothing; one that would change nothing takes no lock, writes
    /// nothing but the Namespace's lifecycle annotations, and goes through.
    @Test(arguments: [true, false]) func twoStartsAtOnceDoNotInterleave(secondChanges: Bool) async throws {
        let c = try await ClusterHarness()
        final class Second: @unchecked Sendable { var error: Error?; var calls: ArraySlice<String> = []; var started = false }
        let second = Second()
        let cluster = c.cluster
        cluster.beforeCallAsync = { call in
            // The first list of Deployments is the wait's (a namespace this start created is not listed).
            guard call.hasPrefix("list Deployment"), !second.started else { return }
            second.started = true
            if secondChanges { try? c.h.tmp.write("dep/config.env", ((try? c.h.read("dep/config.env")) ?? "") + "NEW_SETTING=on\n") }
            let before = cluster.calls.count
            do { _ = try await c.start() } catch { second.error = error }
            second.calls = cluster.calls[before...]
        }
        _ = try await c.start()
        #expect(second.started)
        #expect(!second.calls.contains { $0.hasPrefix("apply") || $0.hasPrefix("delete") || $0.hasPrefix("update") }, "\(second.calls)")
        if secondChanges {
            #expect(second.calls.contains("create Lease \(c.id)/so-deployment-lock"), "\(second.calls)")
            let message = (second.error as? SoError)?.message ?? ""
            #expect(message.contains("deployment \(c.id) is being changed by another so run (localhost:\(getpid()):"), "\(message)")
            #expect(!second.calls.contains { $0.hasPrefix("patch") }, "\(second.calls)")
        } else {
            #expect(second.error == nil && !second.calls.contains { $0.contains("Lease") }, "\(second.calls)")
        }
        // The first finished and gave the lock up.
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }

    /// SIGINT in the middle of a start: the lock is given up before `so` exits.
    @Test func anInterruptedStartGivesTheLockUp() async throws {
        let c = try await ClusterHarness()
        final class Record: @unchecked Sendable { var codes: [Int32] = []; var leaseAtExit: JSON?; var leaseBefore: JSON?; var interrupted = false }
        let record = Record()
        let cluster = c.cluster, id = c.id
        let interrupts = Interrupts(terminate: { code in
            record.codes.append(code)
            record.leaseAtExit = cluster.object("Lease", "so-deployment-lock", namespace: id)
        })
        var ctx = c.ctx
        ctx.interrupts = interrupts
        cluster.beforeCallAsync = { call in
            guard call.hasPrefix("apply Deployment"), !record.interrupted else { return }
            record.interrupted = true
            record.leaseBefore = cluster.object("Lease", "so-deployment-lock", namespace: id)
            // As the signal thread does: off the task's thread, which stays free for the release.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread { interrupts.interrupt(signal: SIGINT); done.resume() }.start()
            }
        }
        _ = try? await ClusterHarness(copying: c, ctx: ctx).start()
        #expect(record.codes == [130])
        #expect(record.leaseBefore != nil)
        #expect(record.leaseAtExit == nil)
    }

    @Test func anExpiredLockIsTakenOverByCompareAndSwapAndARacingRunLoses() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let long = Timestamps.microTime(c.ctx.clock.now().addingTimeInterval(-3600))
        func seedExpired() throws {
            try c.cluster.seed(KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                                          body: [("spec", .map([("holderIdentity", .string("ci-runner:42:abcd")), ("leaseDurationSeconds", .int(60)),
                                                                ("acquireTime", .string(long)), ("renewTime", .string(long))]))]))
        }
        // Another run takes the expired lock between our read and our update: we lose, and apply nothing.
        try seedExpired()
        let cluster = c.cluster
        cluster.beforeCall = { call in
            guard call.hasPrefix("update Lease") else { return }
            cluster.update("Lease", "so-deployment-lock", namespace: c.id) { lease in
                guard case .object(var o) = lease, case .object(var meta)? = o["metadata"] else { return }
                meta["resourceVersion"] = .string("racer")
                o["metadata"] = .object(meta)
                lease = .object(o)
            }
        }
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").contains("took the lock at the same moment")
        }
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply Deployment") })
        // Without a racer the expired lock is taken over (create refused, read, update) and released at the end.
        cluster.beforeCall = nil
        try seedExpired()
        let before = c.cluster.calls.count
        _ = try await c.start()
        let lockCalls = c.cluster.calls[before...].filter { $0.contains("Lease") }
        #expect(Array(lockCalls) == ["create Lease \(c.id)/so-deployment-lock", "get Lease \(c.id)/so-deployment-lock",
                                     "update Lease \(c.id)/so-deployment-lock", "delete Lease \(c.id)/so-deployment-lock"])
    }
}
