import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// The node that holds a deployment's path volumes on the cluster start reached, when render alone cannot know
/// it: on kind, the host's cluster's node with the mounts (whatever the cluster is named: its first worker when it
/// has workers, else its control plane); on another cluster a
/// `deploy-to: k8s-kind` spec is sent to, its only node. Several nodes and no `volume-node:` is refused: the
/// path is on one machine, and a pod on another would get an empty directory.
struct VolumeNodeFinder {
    let client: ClusterClient

    /// nil when render decides alone: the spec names the node, no volume is a path, or `deploy-to: k8s` (whose
    /// render refuses a path without a node).
    func find(_ model: DeploymentModel, _ manifest: Manifest, target: ClusterTarget) async throws -> VolumeNode? {
        let paths = manifest.objects.filter { $0.isKind(.persistentVolume) }
        guard model.spec.volumeNode == nil, !paths.isEmpty, model.deployTo == .k8sKind else { return nil }
        if let kind = target.kindCluster {
            // The node with the mounts: the first worker of a cluster with workers (kind-workers), else its only
            // node. The running cluster says which (the deployment that made it may have asked otherwise).
            let workers = try? await client.list(.node, namespace: nil, labelSelector: nil)
                .filter { $0.name.hasPrefix("\(kind)-worker") }.count
            return .node(KindConfig.mountNode(cluster: kind, workers: workers ?? model.spec.kindWorkers))
        }
        // A user who may not list nodes: none named, as before this rule.
        guard let nodes = try? await client.list(.node, namespace: nil, labelSelector: nil), !nodes.isEmpty else {
            return .unknown
        }
        if nodes.count == 1 { return .node(nodes[0].name) }
        let names = nodes.map(\.name).sorted()
        throw SoError(
            "the spec's path volumes (\(paths.map(\.name).joined(separator: ", "))) are directories of one node, and "
                + "this cluster (not kind) has \(names.count): \(English.shortList(names, at: 5))",
            hint: "name the node that holds them with 'volume-node: NODE' in \(model.spec.path), "
                + "or make them dynamic volumes (a volume without a path)",
            at: SourceLocation(file: model.spec.path))
    }
}
