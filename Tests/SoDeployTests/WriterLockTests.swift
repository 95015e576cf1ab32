import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// Every verb that writes to a deployment holds its Lease: a second writer waits for it (saying who holds it)
/// and goes on once it is given up, or fails at its timeout naming the holder, having written nothing.
@Suite struct WriterLockTests {
    static let holder = "ci-runner:42:abcd"

    /// A live Lease of another run (renewed now, for an hour).
    static func seedHeldLease(_ c: ClusterHarness) throws {
        let now = Timestamps.microTime(c.ctx.clock.now())
        try c.cluster.seed(
            KubeObject(
                apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: c.id,
                body: [
                    (
                        "spec",
                        .map([
                            ("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(3600)),
                            ("acquireTime", .string(now)), ("renewTime", .string(now)),
                        ])
                    )
                ]))
    }

    /// A started deployment with generated secrets.
    static func started() async throws -> ClusterHarness {
        let c = try await ClusterHarness.editingSpec("config:\n", "config:\n  PIN: $generate:hex:8$\n")
        _ = try await c.start()
        return c
    }

    static func writes(_ calls: ArraySlice<String>) -> [String] {
        calls.filter { call in
            ["apply ", "delete ", "patch ", "update ", "create "].contains { call.hasPrefix($0) }
                && !call.contains("Lease")
        }
    }

    @Test func stopRestartAndRotateWaitForTheHolderThenFailNamingItHavingWrittenNothing() async throws {
        let c = try await Self.started()
        try Self.seedHeldLease(c)
        let before = c.cluster.calls.count
        let verbs: [(String, () async throws -> Void)] = [
            (
                "stop",
                {
                    _ = try await StopAction(c.ctx).run(
                        StopRequest(directory: "dep", cluster: c.options, timeout: 10, volumeGuard: nil))
                }
            ),
            (
                "restart",
                { try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: false, timeout: 10) }
            ),
            (
                "rotate-secrets",
                { _ = try await ObserveAction(c.ctx).rotateSecrets("dep", cluster: c.options, keys: [], timeout: 10) }
            ),
        ]
        for (verb, run) in verbs {
            let began = c.ctx.clock.now()
            await #expect { try await run() } throws: { e in
                ((e as? SoError)?.message ?? "").contains("is being changed by another so run (\(Self.holder))")
            }
            // It waited its timeout (polling), not failing at once.
            #expect(c.ctx.clock.now().timeIntervalSince(began) >= 10, "\(verb)")
        }
        #expect(Self.writes(c.cluster.calls[before...]).isEmpty, "\(Self.writes(c.cluster.calls[before...]))")
        #expect(
            c.h.console.stderr.contains("waiting") || c.h.console.statuses.contains { $0.contains("waiting") }
                || c.h.console.stdout.contains("waiting"),
            "the wait names the holder")
    }

    @Test func aSecondWriterGoesOnOnceTheHolderGivesTheLeaseUp() async throws {
        let c = try await Self.started()
        try Self.seedHeldLease(c)
        let cluster = c.cluster
        final class Tries: @unchecked Sendable { var count = 0 }
        let tries = Tries()
        cluster.beforeCall = { call in
            guard call == "create Lease \(c.id)/so-deployment-lock" else { return }
            tries.count += 1
            // The holder finishes while this run waits: its Lease is gone at the third try.
            if tries.count == 3 { cluster.remove("Lease", "so-deployment-lock", namespace: c.id) }
        }
        let deleted = try await StopAction(c.ctx).run(
            StopRequest(directory: "dep", cluster: c.options, timeout: 60, volumeGuard: nil))
        #expect(tries.count == 3 && deleted.contains("Deployment \(c.id)-deployment"), "\(tries.count) \(deleted)")
        #expect(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id) == nil)
        // Given up at the end.
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }

    /// A rotation that ends while a start waits for the Lease is kept: the start reads the stored values again
    /// under the Lease, not the ones it read before it (the race that undid 3 rotations in 4 on a real node).
    @Test func aRotationThatEndsWhileAStartWaitsIsNotUndone() async throws {
        let c = try await Self.started()
        let secretName = "\(c.id)-generated-secrets"
        let original = try #require(c.cluster.object("Secret", secretName, namespace: c.id)?["data"]?["PIN"]?.string)
        // The start has a change to make (it takes the Lease); the rotation happens between its first read of the
        // stored values and its taking the Lease.
        try c.h.tmp.write("dep/config.env", try c.h.read("dep/config.env") + "NEW_SETTING=on\n")
        let cluster = c.cluster
        final class Once: @unchecked Sendable { var done = false }
        let once = Once()
        cluster.beforeCallAsync = { call in
            guard call == "create Lease \(c.id)/so-deployment-lock", !once.done else { return }
            once.done = true
            _ = try? await ObserveAction(c.ctx).rotateSecrets("dep", cluster: c.options, keys: ["PIN"], timeout: 30)
        }
        _ = try await c.start()
        let rotated = try #require(c.cluster.object("Secret", secretName, namespace: c.id)?["data"]?["PIN"]?.string)
        #expect(once.done && rotated != original, "the start put the old value back")
    }

    /// cleanup removes a namespace under its deployment's Lease, and one already being deleted is no error.
    @Test func cleanupTakesEachDeploymentsLeaseAndSkipsANamespaceAlreadyGoing() async throws {
        let c = try await Self.started()
        let listing = try #require(try await ListAction(c.ctx).list(c.cluster).first { $0.namespace == c.id })
        let before = c.cluster.calls.count
        try await Remover(ctx: c.ctx, client: c.cluster).remove([listing], wait: false, timeout: 30)
        let calls = Array(c.cluster.calls[before...])
        let lease = calls.firstIndex(of: "create Lease \(c.id)/so-deployment-lock")
        let delete = calls.firstIndex(of: "delete Namespace \(c.id)")
        #expect(lease != nil && delete != nil && lease! < delete!, "\(calls)")
        // Gone already (another run removed it): nothing to do, no error.
        try await Remover(ctx: c.ctx, client: c.cluster).remove([listing], wait: false, timeout: 30)
    }
}
