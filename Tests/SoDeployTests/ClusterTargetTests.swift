import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct KindTargetTests {
    @Test func createsTheClusterWhenNoneExistsAndReusesItLater() async throws {
        let c = try await ClusterHarness()
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")  // again, under the host's lock
        p.expect(["kind", "create", "cluster", "--name", clusterID, "--config", c.h.path("dep/kind-config.yml")])
        p.expect(
            ["kind", "get", "kubeconfig", "--name", clusterID],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        // The example's images are public (no :local tag): no docker calls, nothing to load.
        do {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain))
        } catch {
            Issue.record("\(error) \(p.calls.map(\.arguments))")
            return
        }
        #expect(p.unexpected.isEmpty, "\(p.unexpected) \(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))

        // A second deployment on the same host reuses the running cluster, whatever its name.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(
            ["kind", "get", "kubeconfig", "--name", "shared"],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(c.h.console.stdout.contains("using the host's kind cluster 'shared'"))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty)
    }
}

extension KindTargetTests {
    /// kind writes `kind-<cluster>` into the user's kubeconfig: it is used without asking kind (which
    /// would ask docker twice); a stale entry that does not answer falls back to `kind get kubeconfig`.
    @Test func theUsersKindContextIsUsedAndAStaleOneFallsBackToKind() async throws {
        var c = try await ClusterHarness()
        let p = c.h.processes
        p.missing = []
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "get", "kubeconfig"]) })

        // The user's entry points at a port nothing listens on any more: kind's own kubeconfig is used.
        try c.h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared")
                .replacingOccurrences(of: "127.0.0.1:6443", with: "127.0.0.1:1"))
        let cluster = c.cluster
        var ctx = c.ctx
        ctx.connect = { connection in
            if connection.server.hasSuffix(":1") {
                let gone = FakeCluster()
                for verb in ["get", "create", "apply", "list", "patch", "update", "delete"] {
                    gone.failures[verb] = SoError(
                        "cannot reach the API server \(connection.server) (context \(connection.contextName)): connection refused",
                        hint: "is the cluster running?", exitCode: SoError.exitUnreachable)
                }
                return gone
            }
            return cluster
        }
        c = ClusterHarness(copying: c, ctx: ctx)
        // Listed, the stale context fails, listed again through kind, which prints a kubeconfig that answers.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(
            ["kind", "get", "kubeconfig", "--name", "shared"],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster shared"))

        // The deployment's own cluster in the user's kubeconfig: no kind process at all.
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        try c.h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        let calls = p.calls.count
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.calls.count == calls, "\(p.calls.dropFirst(calls).map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))
    }

    /// Reaching the cluster overlaps rendering, but a deployment that does not render creates no cluster.
    @Test func aDeploymentThatDoesNotRenderCreatesNoCluster() async throws {
        let c = try await ClusterHarness()
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with:
                    "network:\n  http-proxy:\n    - host-name: a.localhost\n      routes:\n        - path: /\n          proxy-to: nosuch:80\n"
            ))
        #expect(try c.h.read("dep/spec.yml") != spec)
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        await #expect {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain))
        } throws: { e in
            ((e as? SoError)?.message ?? "").contains("no service 'nosuch'")
        }
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "create"]) }, "\(p.calls.map(\.arguments))")
        #expect(p.unexpected.isEmpty)
        #expect(c.cluster.calls.isEmpty)
    }
}
