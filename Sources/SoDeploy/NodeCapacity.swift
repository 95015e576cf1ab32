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
    /// The nodes that take pods (a cordoned one does not), with what each has allocatable.
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
            nodes: listed.filter { $0.at("spec", "unschedulable")?.bool != true }.map { n in
                (
                    n.name, n.at("status", "allocatable", "cpu")?.string ?? "?",
                    n.at("status", "allocatable", "memory")?.string ?? "?"
                )
            }, canGrow: !fixed)
    }

    /// Whether the pod would fit on one of the nodes were nothing else on it: its requests (its containers' summed,
    /// or its largest init container's, whichever is more) within a node's allocatable CPU and memory. Such a pod
    /// waits for room that other pods hold, room that frees as they end.
    func fitsWhenFree(_ pod: JSON) -> Bool {
        func asked(_ key: String, cpu: Bool) -> Double {
            func request(_ c: JSON) -> Double {
                c.at("resources", "requests", key)?.string.map { Quantity.value($0, cpu: cpu) } ?? 0
            }
            let running = (pod.at("spec", "containers")?.array ?? []).reduce(0) { $0 + request($1) }
            return (pod.at("spec", "initContainers")?.array ?? []).map(request).reduce(running, max)
        }
        let cpu = asked("cpu", cpu: true)
        let memory = asked("memory", cpu: false)
        return nodes.contains { n in
            cpu <= Quantity.value(n.cpu, cpu: true) && memory <= Quantity.value(n.memory, cpu: false)
        }
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
        // A pod runs on one node: with several, what counts is the largest, not their sum.
        let largest = nodes.max { a, b in
            (Quantity.value(a.cpu, cpu: true), Quantity.value(a.memory, cpu: false))
                < (Quantity.value(b.cpu, cpu: true), Quantity.value(b.memory, cpu: false))
        }
        let offer =
            nodes.count == 1 || largest == nil
            ? nodes.map { "\($0.name) has cpu \($0.cpu), memory \($0.memory) allocatable in all" }.joined(
                separator: "; ")
            : "it fits on no single node of \(nodes.count): the largest, \(largest!.name), has cpu \(largest!.cpu), "
                + "memory \(largest!.memory) allocatable in all"
        return (asks.isEmpty ? "" : asks.joined(separator: ", ") + "; ") + offer + " (the cluster cannot add nodes)"
    }

    func hint(directory: String) -> String {
        "lower resources: in \(Path.join(directory, "spec.yml")) (e.g. resources: {containers: {NAME: {reservations: {cpus: '0.25', memory: 256M}}}}), "
            + "or stop deployments you no longer need ('so deployment list')"
    }
}
