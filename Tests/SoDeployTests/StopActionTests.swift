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

/// The host's kind cluster is every kind deployment's: `stop --perform-cluster-management` deletes it only when
/// no other `so` deployment runs on it.
@Suite struct SharedKindClusterStopTests {
    @Test func theClusterIsKeptWhileAnotherDeploymentRunsOnIt() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        let other = KubeObject(
            apiVersion: "v1", kind: "Namespace", name: "laconic-other",
            labels: [("app.kubernetes.io/managed-by", "so")],
            annotations: [(DeploymentNames.directoryAnnotation, "/elsewhere/other")])
        try c.cluster.seed(other)
        let p = c.h.processes
        p.missing = []
        let stop = StopRequest(
            directory: "dep", cluster: ClusterOptions(performClusterManagement: true), deleteNamespace: true,
            timeout: 10, volumeGuard: nil)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        try await StopAction(c.ctx).run(stop)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "no kind delete: \(p.unexpected) \(p.pending)")
        let kept = c.ctx.diagnostics.all.map(\.message)
        #expect(
            kept.contains("kind cluster shared kept: 1 other deployment runs on it: other (laconic-other)"), "\(kept)")
        // The other one gone: the cluster goes too.
        _ = try await c.cluster.delete(.namespace, name: "laconic-other", namespace: nil, propagation: .background)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "delete", "cluster", "--name", "shared"])
        try await StopAction(c.ctx).run(stop)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
    }
}
