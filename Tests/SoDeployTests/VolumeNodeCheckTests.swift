import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDeploy

/// A pod that must go to its volume's node, which cannot take it: named in one line (issue 54).
@Suite struct VolumeNodeCheckTests {
    static func cluster(nodes: [(String, YValue)], pinnedTo: [String]) throws -> FakeCluster {
        let c = FakeCluster()
        for (name, spec) in nodes {
            try c.seed(KubeObject(apiVersion: "v1", kind: "Node", name: name, body: [("spec", spec)]))
        }
        let term: YValue = .map([
            (
                "matchExpressions",
                .list([
                    .map([
                        ("key", .string("kubernetes.io/hostname")), ("operator", .string("In")),
                        ("values", .list(pinnedTo.map { .string($0) })),
                    ])
                ])
            )
        ])
        try c.seed(
            KubeObject(
                apiVersion: "v1", kind: "PersistentVolume", name: "pv-data",
                body: [
                    (
                        "spec",
                        .map([("nodeAffinity", .map([("required", .map([("nodeSelectorTerms", .list([term]))]))]))])
                    )
                ]))
        try c.seed(
            KubeObject(
                apiVersion: "v1", kind: "PersistentVolumeClaim", name: "d-data", namespace: "ns",
                body: [("spec", .map([("volumeName", .string("pv-data"))]))]))
        return c
    }

    static let pod = try! JSON.parse(
        Data(
            #"{"metadata":{"name":"p"},"spec":{"volumes":[{"name":"tmp","emptyDir":{}},{"name":"data","persistentVolumeClaim":{"claimName":"d-data"}}]}}"#
                .utf8))

    /// Long after the fake cluster made its nodes (2026-01-01).
    static let later = Timestamps.parse("2026-06-01T00:00:00Z")!

    static let schedulable: YValue = .map([])
    static let cordoned: YValue = .map([("unschedulable", .bool(true))])

    @Test func aCordonedNodeIsNamedWithItsVolume() async throws {
        let c = try Self.cluster(
            nodes: [("so-node", Self.schedulable), ("so-node-2", Self.cordoned)], pinnedTo: ["so-node-2"])
        let held = try await VolumeNodeCheck(client: c, namespace: "ns", now: Self.later).why(Self.pod)
        #expect(held?.message == "its volume data is on so-node-2, which is unschedulable (cordoned or drained)")
        #expect(held.map { $0.state.hint($0.node) }?.contains("kubectl uncordon so-node-2") == true)
    }

    @Test func aNodeThatIsGoneOrNotReadyIsNamedSo() async throws {
        var c = try Self.cluster(nodes: [("so-node", Self.schedulable)], pinnedTo: ["so-node-2"])
        #expect(
            try await VolumeNodeCheck(client: c, namespace: "ns", now: Self.later).why(Self.pod)?.message
                == "its volume data is on so-node-2, which is gone from the cluster")
        c = try Self.cluster(nodes: [("so-node-2", Self.schedulable)], pinnedTo: ["so-node-2"])
        c.update("Node", "so-node-2", namespace: nil) { n in
            guard case .object(var o) = n else { return }
            o["status"] = .object([
                "conditions": .array([.object(["type": .string("Ready"), "status": .string("Unknown")])])
            ])
            n = .object(o)
        }
        let held = try await VolumeNodeCheck(client: c, namespace: "ns", now: Self.later).why(Self.pod)
        #expect(held?.state == .notReady)
    }

    /// A node that joined moments ago and is not ready yet (a new kind worker, for about 20 s) is waited for; the
    /// same node past the grace is not ready, which start reports at once.
    @Test func aNodeThatIsStillJoiningIsWaitedFor() async throws {
        let c = try Self.cluster(nodes: [("w", Self.schedulable)], pinnedTo: ["w"])
        c.update("Node", "w", namespace: nil) { n in
            guard case .object(var o) = n else { return }
            o["status"] = .object([
                "conditions": .array([.object(["type": .string("Ready"), "status": .string("False")])])
            ])
            n = .object(o)
        }
        let made = Timestamps.parse("2026-01-01T00:00:00Z")!
        let soon = try await VolumeNodeCheck(client: c, namespace: "ns", now: made + 20).why(Self.pod)
        #expect(soon?.state == .joining)
        #expect(soon?.state.fatal == false)
        #expect(soon?.message == "its volume data is on w, which is still joining the cluster (not ready yet)")
        let past = made + VolumeNodeCheck.joiningGrace + 1
        let late = try await VolumeNodeCheck(client: c, namespace: "ns", now: past).why(Self.pod)
        #expect(late?.state == .notReady)
        #expect(late?.state.fatal == true)
    }

    @Test func aNodeThatCanTakeItIsNoReason() async throws {
        var c = try Self.cluster(nodes: [("so-node-2", Self.schedulable)], pinnedTo: ["so-node-2"])
        #expect(try await VolumeNodeCheck(client: c, namespace: "ns", now: Self.later).why(Self.pod) == nil)
        // Of two nodes the volume may use, one that can take it is enough.
        c = try Self.cluster(nodes: [("a", Self.cordoned), ("b", Self.schedulable)], pinnedTo: ["a", "b"])
        #expect(try await VolumeNodeCheck(client: c, namespace: "ns", now: Self.later).why(Self.pod) == nil)
    }
}
