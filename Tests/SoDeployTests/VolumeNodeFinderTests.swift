import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoDeploy

/// Start names the node that holds a path volume on the cluster it reached (issue 54): a cluster's only node; on
/// several nodes the spec's `volume-node:`, else a refusal before anything is applied.
@Suite struct VolumeNodeFinderTests {
    static func harness(nodes: [String], spec edit: String = "") async throws -> ClusterHarness {
        let c = try await ClusterHarness.withPathVolume()
        if !edit.isEmpty { try c.h.tmp.write("dep/spec.yml", try c.h.read("dep/spec.yml") + edit) }
        for n in nodes { try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Node", name: n)) }
        return c
    }

    static func pinned(_ c: ClusterHarness) -> [String] {
        let pv = c.cluster.all.first { $0.0.type.kind == "PersistentVolume" }?.1
        let values = pv?.at("spec", "nodeAffinity", "required", "nodeSelectorTerms")?.array.first?[
            "matchExpressions"]?.array.first?["values"]?.array
        return (values ?? []).compactMap(\.string)
    }

    @Test func aClusterOfOneNodeHoldsThePathOnIt() async throws {
        let c = try await Self.harness(nodes: ["so-node"])
        _ = try await c.start()
        #expect(Self.pinned(c) == ["so-node"])
    }

    @Test func severalNodesAndNoVolumeNodeAreRefusedBeforeAnythingIsApplied() async throws {
        let c = try await Self.harness(nodes: ["so-node", "so-node-2"])
        let e = try await #require(throws: SoError.self) { _ = try await c.start() }
        #expect(e.message.contains("this cluster (not kind) has 2: so-node, so-node-2"), "\(e.message)")
        #expect(e.hint?.contains("volume-node: NODE") == true && e.hint?.contains("dynamic volumes") == true)
        #expect(!c.cluster.calls.contains { $0.hasPrefix("apply") }, "\(c.cluster.calls)")
    }

    @Test func theSpecsVolumeNodeWinsOnAnyCluster() async throws {
        let c = try await Self.harness(nodes: ["so-node", "so-node-2"], spec: "volume-node: so-node-2\n")
        _ = try await c.start()
        #expect(Self.pinned(c) == ["so-node-2"])
    }

    /// On kind the node with the mounts: the running cluster's first worker when it has workers (`kind-workers`),
    /// else its control plane; the spec's count when the nodes cannot be listed.
    @Test func onKindItIsTheFirstWorkerWhenTheClusterHasWorkers() async throws {
        let target = ClusterTarget(
            connection: ClusterConnection(contextName: "kind-so", server: "https://127.0.0.1:6443"), kindCluster: "so")
        let c = try await Self.harness(nodes: ["so-control-plane", "so-worker", "so-worker2"])
        let model = try DeploymentLoader.load(c.h.path("dep"), fs: c.h.fs, diagnostics: DiagnosticSink())
        let manifest = try Renderer.render(model)
        let finder = VolumeNodeFinder(client: c.cluster)
        #expect(try await finder.find(model, manifest, target: target) == .node("so-worker"))
        let one = try await Self.harness(nodes: ["so-control-plane"])
        #expect(
            try await VolumeNodeFinder(client: one.cluster).find(model, manifest, target: target)
                == .node("so-control-plane"))
        one.cluster.failures["list Node"] = SoError("nodes is forbidden (Forbidden)")
        try one.h.tmp.write("dep/spec.yml", try one.h.read("dep/spec.yml") + "kind-workers: 1\n")
        let asking = try DeploymentLoader.load(one.h.path("dep"), fs: one.h.fs, diagnostics: DiagnosticSink())
        #expect(
            try await VolumeNodeFinder(client: one.cluster).find(asking, manifest, target: target) == .node("so-worker")
        )
    }

    @Test func aUserWhoMayNotListNodesGetsNoNodeNamed() async throws {
        let c = try await Self.harness(nodes: ["so-node"])
        c.cluster.failures["list Node"] = SoError("nodes is forbidden (Forbidden)")
        _ = try await c.start()
        let pv = c.cluster.all.first { $0.0.type.kind == "PersistentVolume" }?.1
        #expect(pv != nil && pv?.at("spec", "nodeAffinity") == nil)
    }
}
