import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so deployment list` and `so cleanup`: every `so` deployment on the cluster, read in two requests
/// (namespaces and Deployments, each one labelled list) however many there are.
public struct ListAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(cluster: ClusterOptions) async throws -> [DeploymentListing] {
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        return try await list(ctx.connect(target.connection))
    }

    /// What is read of each Deployment: its namespace and what `Waiter.deploymentPending` judges it by (its
    /// managedFields and pod template, nine tenths of its bytes, are skipped).
    static let deploymentShape = JSONShape.keys([
        "metadata": .keys(["namespace": .all, "name": .all, "generation": .all]),
        "spec": .keys(["replicas": .all]), "status": .all,
    ])

    package func list(_ client: ClusterClient) async throws -> [DeploymentListing] {
        let selector = DeploymentNames.Label.managedBySoSelector
        // The namespaces are read beside the Deployments.
        async let listed = client.list(.namespace, namespace: nil, labelSelector: selector)
        // Only counts are kept of the Deployments (a thousand of them are 10 MB of JSON): a page at a time, each
        // read only as far as `deploymentShape`.
        var byNamespace: [String: (ready: Int, total: Int)] = [:]
        try await client.forEachPage(
            .deployment, namespace: nil, labelSelector: selector, keeping: Self.deploymentShape
        ) { page in
            for d in page {
                let ns = d.at("metadata", "namespace")?.string ?? ""
                var v = byNamespace[ns] ?? (0, 0)
                v.total += 1
                if Waiter.deploymentPending(d) == nil { v.ready += 1 }
                byNamespace[ns] = v
            }
        }
        return try await listed.compactMap { ns -> DeploymentListing? in
            let a = ns.annotations
            let labels = ns.at("metadata", "labels")?.object ?? [:]
            guard let dir = a[DeploymentNames.directoryAnnotation] else { return nil }
            let counts = byNamespace[ns.name] ?? (0, 0)
            return DeploymentListing(
                name: Path.basename(dir), stack: labels[DeploymentNames.Label.stack]?.string ?? "", namespace: ns.name,
                id: labels[DeploymentNames.Label.instance]?.string ?? labels["app"]?.string ?? ns.name, directory: dir,
                host: a[DeploymentNames.Annotation.host] ?? "",
                createdAt: ns.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse),
                expiresAt: a[DeploymentNames.Annotation.expiresAt].flatMap(Timestamps.parse),
                readyDeployments: counts.ready, deployments: counts.total,
                terminating: ns.at("status", "phase")?.string == "Terminating", madeBySo: NamespaceContents.madeBySo(ns)
            )
        }.sorted { ($0.name, $0.namespace) < ($1.name, $1.namespace) }
    }
}
