import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// No delete reaches outside what `so` made: a namespace `so` did not make (it existed before the first
/// start) is deleted whole only when it holds nothing of others; one `so` made is deleted without a look.
@Suite struct NamespaceKeepTests {
    /// A namespace someone else made, with their ConfigMap in it, adopted by a start.
    static func adopted() async throws -> ClusterHarness {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id))
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "ConfigMap", name: "theirs", namespace: c.id))
        _ = try await c.start()
        return c
    }

    @Test func stopKeepsANamespaceItDidNotMakeThatHoldsOthersObjects() async throws {
        let c = try await Self.adopted()
        try await StopAction(c.ctx).run(
            StopRequest(
                directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil))
        let left = c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" }.sorted()
        #expect(left == ["ConfigMap theirs", "Namespace \(c.id)"], "\(left)")
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains("namespace \(c.id) was kept: so did not make it and it holds 1 object of others")
                    && $0.message.contains("ConfigMap theirs")
            }, "\(c.ctx.diagnostics.all.map(\.message))")
        #expect(!c.h.console.stdout.contains("namespace deleted"), "\(c.h.console.stdout)")
    }

    @Test func cleanupKeepsANamespaceItDidNotMakeThatHoldsOthersObjects() async throws {
        let c = try await Self.adopted()
        let listing = try #require(try await ListAction(c.ctx).list(c.cluster).first { $0.namespace == c.id })
        #expect(!listing.madeBySo)
        try await Remover(ctx: c.ctx, client: c.cluster).remove([listing], wait: true, timeout: 30)
        let left = c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" }.sorted()
        #expect(left == ["ConfigMap theirs", "Namespace \(c.id)"], "\(left)")
    }

    @Test func aNamespaceItDidNotMakeThatHoldsNothingElseIsDeleted() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id))
        _ = try await c.start()
        try await StopAction(c.ctx).run(
            StopRequest(
                directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil))
        #expect(c.cluster.all.isEmpty, "\(c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" })")
    }

    /// The mark is set by the namespace's create alone: a start's apply neither sets it on a namespace it
    /// adopted nor takes it off one it made, and a namespace it made is deleted without a look inside.
    @Test func theMarkIsTheCreatesAlone() async throws {
        let made = try await ClusterHarness()
        _ = try await made.start()
        _ = try await made.start()
        let ns = try #require(made.cluster.object("Namespace", made.id))
        #expect(NamespaceContents.madeBySo(ns))
        let before = made.cluster.calls.count
        try await StopAction(made.ctx).run(
            StopRequest(
                directory: "dep", cluster: made.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil))
        // Every list of the stop names this deployment's label: nothing was looked at beyond its own objects.
        let unlabelled = made.cluster.calls[before...].filter { $0.hasPrefix("list ") && !$0.contains("=") }
        #expect(unlabelled.isEmpty, "\(unlabelled)")
        #expect(made.cluster.all.isEmpty)

        let adopted = try await Self.adopted()
        _ = try await adopted.start()
        #expect(try #require(adopted.cluster.object("Namespace", adopted.id)).annotations["so.dev/made-by"] == nil)
    }
}

/// `so down` does not wait out the namespace's own deletion (about 5 s on an empty one): a start of the same
/// namespace right after finds it being deleted, waits until it is gone, and makes it anew.
@Suite struct NamespaceBeingDeletedTests {
    @Test func aStartWaitsForItsNamespaceToGoThenMakesItAnew() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                annotations: [("laconic.com/deployment-dir", c.h.path("dep"))],
                body: [("status", .map([("phase", .string("Terminating"))]))]))
        let cluster = c.cluster
        let id = c.id
        final class Looks: @unchecked Sendable { var count = 0 }
        let looks = Looks()
        // The namespace controller finishes after the start has looked at the namespace three times.
        cluster.beforeCall = { call in
            guard call == "get Namespace \(id)" else { return }
            looks.count += 1
            if looks.count == 3 { cluster.remove("Namespace", id, namespace: nil) }
        }
        _ = try await c.start()
        cluster.beforeCall = nil
        #expect(c.h.console.stdout.contains("namespace \(id) is being deleted"), "\(c.h.console.stdout)")
        let ns = try #require(c.cluster.object("Namespace", id))
        #expect(ns.at("status", "phase")?.string != "Terminating" && NamespaceContents.madeBySo(ns))
        #expect(c.cluster.object("Deployment", "\(id)-deployment", namespace: id) != nil)
    }

    @Test func aNamespaceStillBeingDeletedAtTheTimeoutIsNamed() async throws {
        let c = try await ClusterHarness()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Namespace", name: c.id,
                body: [("status", .map([("phase", .string("Terminating"))]))]))
        await #expect { _ = try await c.start() } throws: { e in
            ((e as? SoError)?.message ?? "").contains("namespace \(c.id) is being deleted")
        }
        #expect(c.cluster.object("Lease", "so-deployment-lock", namespace: c.id) == nil)
    }

    @Test func downDoesNotWaitForTheNamespaceToGo() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        var stop = StopRequest(
            directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil)
        stop.waitForNamespace = false
        let before = c.cluster.calls.count
        try await StopAction(c.ctx).run(stop)
        let calls = Array(c.cluster.calls[before...])
        let deleted = try #require(calls.firstIndex(of: "delete Namespace \(c.id)"))
        #expect(!calls[(deleted + 1)...].contains("get Namespace \(c.id)"), "\(calls)")
        #expect(c.h.console.stdout.contains("namespace being deleted"), "\(c.h.console.stdout)")
    }
}
