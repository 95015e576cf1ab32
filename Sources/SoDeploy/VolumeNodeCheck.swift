import Foundation
import SoBasics
import SoKube

/// Why a pod the scheduler cannot place will not run for now: a volume of its is on a node that is cordoned
/// (drained), not ready, or gone. The volume's PersistentVolume names its node (a path volume's, as `so` pins it;
/// a dynamic one's, as the cluster pinned it where it was first bound), so no other node will do.
struct VolumeNodeCheck: Sendable {
    let client: ClusterClient
    let namespace: String
    /// The clock's now: a node made less than `joiningGrace` ago that is not ready yet is joining, not down.
    let now: Date

    /// How long a new node may take to become ready (a kind worker takes about 20 s: its network comes up).
    static let joiningGrace: TimeInterval = 300

    /// "its volume web-data is on so-node-2, which is unschedulable"; nil when each volume's node can take it.
    func why(_ pod: JSON) async throws -> (message: String, node: String, state: NodeState)? {
        for v in pod.at("spec", "volumes")?.array ?? [] {
            guard let claim = v.at("persistentVolumeClaim", "claimName")?.string,
                let pvc = try await client.get(.persistentVolumeClaim, name: claim, namespace: namespace),
                let volume = pvc.at("spec", "volumeName")?.string, !volume.isEmpty,
                let pv = try await client.get(.persistentVolume, name: volume, namespace: nil)
            else { continue }
            let nodes = Self.hostnames(pv)
            guard !nodes.isEmpty else { continue }
            var states: [(String, NodeState)] = []
            for n in nodes {
                states.append((n, Self.state(try await client.get(.node, name: n, namespace: nil), now: now)))
            }
            // One of its nodes can take it: the scheduler's reason is another.
            guard let (node, state) = states.first, states.allSatisfy({ $0.1 != .available }) else { continue }
            let name = v["name"]?.string ?? claim
            return ("its volume \(name) is on \(node), which \(state.phrase)", node, state)
        }
        return nil
    }

    /// What a node is to a pod that must go there.
    enum NodeState: Equatable, Sendable {
        case available, unschedulable, notReady, joining, gone

        /// Whether waiting cannot help (a node that is joining becomes ready by itself).
        var fatal: Bool { self != .available && self != .joining }

        var phrase: String {
            switch self {
            case .available: "can take it"
            case .unschedulable: "is unschedulable (cordoned or drained)"
            case .notReady: "is not ready"
            case .joining: "is still joining the cluster (not ready yet)"
            case .gone: "is gone from the cluster"
            }
        }

        func hint(_ node: String) -> String {
            switch self {
            case .available: ""
            case .unschedulable:
                "the data is on that node's disk: 'kubectl uncordon \(node)' once it may take pods again, and the pod goes back"
            case .notReady:
                "the data is on that node's disk: the pod starts there once its kubelet is back ('kubectl describe node \(node)')"
            case .joining:
                "the pod starts there once the node is ready ('kubectl get nodes' shows it)"
            case .gone:
                "the data was on that node's disk: bring the node back, or 'stop --delete-volumes' and start again with empty volumes"
            }
        }
    }

    static func state(_ node: JSON?, now: Date) -> NodeState {
        guard let node else { return .gone }
        if node.at("spec", "unschedulable")?.bool == true { return .unschedulable }
        let conditions = node.at("status", "conditions")?.array ?? []
        guard let ready = conditions.first(where: { $0["type"]?.string == "Ready" }), ready["status"]?.string != "True"
        else { return .available }
        // A node that joined moments ago (its kubelet registered, its network is still coming up) is waited for.
        let created = node.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse)
        if let created, now.timeIntervalSince(created) < joiningGrace { return .joining }
        return .notReady
    }

    /// The `kubernetes.io/hostname` values a PersistentVolume's node affinity requires.
    static func hostnames(_ pv: JSON) -> [String] {
        var out: [String] = []
        for term in pv.at("spec", "nodeAffinity", "required", "nodeSelectorTerms")?.array ?? [] {
            for e in term["matchExpressions"]?.array ?? []
            where e["key"]?.string == "kubernetes.io/hostname" && e["operator"]?.string == "In" {
                out += (e["values"]?.array ?? []).compactMap(\.string)
            }
        }
        return out
    }
}
