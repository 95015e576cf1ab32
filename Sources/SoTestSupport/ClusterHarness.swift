import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// A deployment directory plus a fake API server that marks Deployments available and Jobs complete.
public struct ClusterHarness: Sendable {
    public let h: Harness
    public let cluster: FakeCluster
    public let ctx: SoContext
    public var kubeconfig: String { h.path("kubeconfig") }
    public var options: ClusterOptions { ClusterOptions(kubeconfig: kubeconfig, performClusterManagement: false) }

    public static let kubeconfigText = FakeKubeconfig.text

    public init(
        stack: String = "example", config: [String] = [], appendToSpec: String = "", healthy: Bool = true,
        environment: [String: String] = [:]
    ) async throws {
        h = try Harness(environment: environment)
        let cluster = FakeCluster()
        self.cluster = cluster
        if healthy {
            cluster.onApply = { json in
                guard case .object(var o) = json else { return }
                let kind = o["kind"]?.string
                if kind == "Deployment" {
                    let replicas = o["spec"]?["replicas"]?.int ?? 1
                    if case .object(var meta)? = o["metadata"] {
                        meta["generation"] = .number(1)
                        o["metadata"] = .object(meta)
                    }
                    o["status"] = .object([
                        "observedGeneration": .number(1), "replicas": .number(Double(replicas)),
                        "updatedReplicas": .number(Double(replicas)), "availableReplicas": .number(Double(replicas)),
                    ])
                } else if kind == "Job" {
                    o["status"] = .object([
                        "succeeded": .number(1),
                        "conditions": .array([.object(["type": .string("Complete"), "status": .string("True")])]),
                    ])
                }
                json = .object(o)
            }
        }
        var ctx = h.ctx
        ctx.connect = { _ in cluster }
        self.ctx = ctx
        try h.tmp.write("kubeconfig", Self.kubeconfigText)
        try await h.initAndCreate(stack, config: config, appendToSpec: appendToSpec)
    }

    /// The example deployment, its spec.yml's `text` replaced by `replacement` after create.
    public static func editingSpec(_ text: String, _ replacement: String) async throws -> ClusterHarness {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "dep/spec.yml", try c.h.read("dep/spec.yml").replacingOccurrences(of: text, with: replacement))
        return c
    }

    /// The example deployment with its volume at a path (`./data/web-data`): a PersistentVolume and a claim bound
    /// to it by name.
    public static func withPathVolume() async throws -> ClusterHarness {
        try await editingSpec("  web-data:\n", "  web-data: ./data/web-data\n")
    }

    /// The same deployment and fake cluster under another context (e.g. a different `connect`).
    public init(copying other: ClusterHarness, ctx: SoContext) {
        h = other.h
        cluster = other.cluster
        self.ctx = ctx
    }

    public func start(wait: Bool = true, timeout: Double = 30) async throws -> StartReport {
        try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: options, wait: wait, timeout: timeout, progress: .plain))
    }

    public var id: String {
        (try? DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink()).deploymentID)
            ?? ""
    }
}
