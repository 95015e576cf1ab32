import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// The cluster's nodes as far as an unschedulable pod is concerned: whether nodes can be added (not on kind,
/// nor on a cluster whose nodes no cloud provider made) and what each offers.
struct NodeCapacity {
    var nodes: [(name: String, cpu: String, memory: String)]
    var canGrow: Bool

    static func read(_ client: ClusterClient) async throws -> NodeCapacity? {
        // A user who may not list nodes gets no capacity note (the wait goes on without it).
        guard let listed = try? await client.list(.node, namespace: nil, labelSelector: nil),
            !listed.isEmpty
        else { return nil }
        // kind's nodes say kind://; bare nodes (kubeadm, the kit) say nothing: neither grows by itself.
        let fixed = listed.allSatisfy { n in
            let provider = n.at("spec", "providerID")?.string ?? ""
            return provider.isEmpty || provider.hasPrefix("kind://")
        }
        return NodeCapacity(
            nodes: listed.map { n in
                (
                    n.name, n.at("status", "allocatable", "cpu")?.string ?? "?",
                    n.at("status", "allocatable", "memory")?.string ?? "?"
                )
            }, canGrow: !fixed)
    }

    /// What the pod asks for, container by container, against what the nodes have in all.
    func explain(_ pod: JSON) -> String {
        var asks: [String] = []
        for c in (pod.at("spec", "initContainers")?.array ?? []) + (pod.at("spec", "containers")?.array ?? []) {
            let r = c.at("resources", "requests")
            let parts = [r?["cpu"]?.string.map { "cpu \($0)" }, r?["memory"]?.string.map { "memory \($0)" }].compactMap
            { $0 }
            if !parts.isEmpty { asks.append("\(c["name"]?.string ?? "?") requests \(parts.joined(separator: ", "))") }
        }
        let offer = nodes.map { "\($0.name) has cpu \($0.cpu), memory \($0.memory) allocatable in all" }.joined(
            separator: "; ")
        return (asks.isEmpty ? "" : asks.joined(separator: ", ") + "; ") + offer + " (the cluster cannot add nodes)"
    }

    func hint(directory: String) -> String {
        "lower resources: in \(Path.join(directory, "spec.yml")) (e.g. resources: {containers: {NAME: {reservations: {cpus: '0.25', memory: 256M}}}}), "
            + "or stop deployments you no longer need ('so deployment list')"
    }
}
