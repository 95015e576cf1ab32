import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDeploy

/// A pod runs on one node: capacity is reasoned per node, never summed (issue 54).
@Suite struct NodeCapacityTests {
    static func node(_ c: FakeCluster, _ name: String, cpu: String, memory: String, cordoned: Bool = false) throws {
        try c.seed(KubeObject(apiVersion: "v1", kind: "Node", name: name))
        c.update("Node", name, namespace: nil) { n in
            guard case .object(var o) = n else { return }
            if cordoned { o["spec"] = .object(["unschedulable": .bool(true)]) }
            o["status"] = .object(["allocatable": .object(["cpu": .string(cpu), "memory": .string(memory)])])
            n = .object(o)
        }
    }

    static func pod(cpu: String) throws -> JSON {
        try JSON.parse(
            Data(
                #"{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"\#(cpu)","memory":"1Gi"}}}]}}"#
                    .utf8))
    }

    @Test func twoHalfEmptyNodesAreNotOneFullOne() async throws {
        let c = FakeCluster()
        try Self.node(c, "so-node", cpu: "2", memory: "8Gi")
        try Self.node(c, "so-node-2", cpu: "3", memory: "4Gi")
        // A cordoned node takes no pod, however large.
        try Self.node(c, "big", cpu: "64", memory: "256Gi", cordoned: true)
        let capacity = try #require(try await NodeCapacity.read(c))
        #expect(capacity.nodes.map(\.name) == ["so-node", "so-node-2"])
        #expect(!capacity.fitsWhenFree(try Self.pod(cpu: "4")), "4 CPUs fit no node, though the two have 5")
        #expect(capacity.fitsWhenFree(try Self.pod(cpu: "3")))
        #expect(
            capacity.explain(try Self.pod(cpu: "4"))
                == "web requests cpu 4, memory 1Gi; it fits on no single node of 2: the largest, so-node-2, has cpu 3, "
                + "memory 4Gi allocatable in all (the cluster cannot add nodes)")
    }
}
