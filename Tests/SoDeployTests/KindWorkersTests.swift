import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// `kind-workers:` against a running kind cluster: kind sets the nodes only at creation, so start reads the running
/// cluster's workers (`kind get nodes`), looks for the mounts on the node that holds them there (its first worker
/// when it has workers, where start pins the path volumes), and reports a count other than the spec's.
@Suite struct KindWorkersTests {
    /// The example deployment on kind with its volume at a path and `kind-workers: workers` (none: the key left out).
    static func deployment(workers: Int?) async throws -> (Harness, String) {
        let (h, clusterID) = try await KindNodeImageTests.deployment()
        let spec = try h.read("dep/spec.yml").replacingOccurrences(
            of: "  web-data:\n", with: "  web-data: ./data/web-data\n")
        try h.tmp.write("dep/spec.yml", spec + (workers.map { "kind-workers: \($0)\n" } ?? ""))
        return (h, clusterID)
    }

    /// Starts `dep` on the running cluster `clusterID` whose nodes are `nodes`, the path volume mounted on `mountNode`.
    static func start(_ h: Harness, _ clusterID: String, nodes: [String], mountNode: String) async throws {
        let cluster = FakeCluster()
        var ctx = h.ctx
        ctx.connect = { _ in cluster }
        let p = h.processes
        p.missing = []
        let mounts = "[{\"Source\":\"\(h.path("dep/data/web-data"))\",\"Destination\":\"/mnt/web-data\"}]"
        p.expect(["kind", "get", "clusters"], stdout: "\(clusterID)\n")
        p.expect(["kind", "get", "nodes", "--name", clusterID], stdout: nodes.map { "\(clusterID)-\($0)\n" }.joined())
        p.expect(["docker", "inspect", "--format", "{{json .Mounts}}", "\(clusterID)-\(mountNode)"], stdout: mounts)
        p.expect(
            ["docker", "inspect", "--format", "{{.Config.Image}}", "\(clusterID)-control-plane"],
            stdout: KindNodeImageTests.image + "\n")
        p.expect(
            ["kind", "get", "kubeconfig", "--name", clusterID],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), wait: false, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
    }

    static func reported(_ h: Harness) -> [Diagnostic] {
        h.ctx.diagnostics.all.filter { $0.message.contains("kind-workers") }
    }

    /// A spec that now asks for no worker, on a cluster made with one: the mounts are found on the worker (not
    /// refused as missing from the control plane), and the count is reported with how to recreate the cluster.
    @Test func aClusterWithAWorkerIsCheckedOnItsWorkerAndReported() async throws {
        let (h, clusterID) = try await Self.deployment(workers: nil)
        defer { h.tmp.cleanup() }
        try await Self.start(h, clusterID, nodes: ["control-plane", "worker"], mountNode: "worker")
        let reported = Self.reported(h)
        #expect(
            reported.map(\.message) == ["kind cluster '\(clusterID)' has 1 worker node, not the spec's kind-workers 0"],
            "\(h.ctx.diagnostics.all.map(\.message))")
        #expect(
            reported.first?.hint
                == "kind sets the nodes only at creation: 'kind delete cluster --name \(clusterID)', then start again "
                + "to create it with 0 workers")
    }

    /// A spec asking for a worker, on a cluster made without one: the control plane holds the mounts; reported.
    @Test func aClusterWithoutWorkersIsCheckedOnItsControlPlaneAndReported() async throws {
        let (h, clusterID) = try await Self.deployment(workers: 1)
        defer { h.tmp.cleanup() }
        try await Self.start(h, clusterID, nodes: ["control-plane"], mountNode: "control-plane")
        #expect(
            Self.reported(h).map(\.message) == [
                "kind cluster '\(clusterID)' has 0 worker nodes, not the spec's kind-workers 1"
            ], "\(h.ctx.diagnostics.all.map(\.message))")
    }

    /// The count the spec asks for: nothing reported.
    @Test func theSpecsCountIsNotReported() async throws {
        let (h, clusterID) = try await Self.deployment(workers: 2)
        defer { h.tmp.cleanup() }
        try await Self.start(h, clusterID, nodes: ["control-plane", "worker", "worker2"], mountNode: "worker")
        #expect(Self.reported(h).isEmpty, "\(h.ctx.diagnostics.all.map(\.message))")
    }
}
