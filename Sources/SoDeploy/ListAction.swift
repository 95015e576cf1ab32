import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so deployment list` and `so cleanup`: every `so` deployment on the cluster, read in two paged lists
/// (the namespaces, 500 a request, and the Deployments' table, 4,000 rows a request).
public struct ListAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(cluster: ClusterOptions) async throws -> [DeploymentListing] {
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        return try await list(ctx.connect(target.connection))
    }

    /// `counts` false: the namespaces alone, one request (a claim's look for its pool's members, which reads their
    /// pods instead); every listing's Deployments then count 0.
    package func list(_ client: ClusterClient, counts: Bool = true) async throws -> [DeploymentListing] {
        let selector = DeploymentNames.Label.managedBySoSelector
        // The namespaces are read beside the Deployments, each only as far as `namespaceShape`.
        async let listed = client.list(
            .namespace, namespace: nil, labelSelector: selector, keeping: Self.namespaceShape)
        // Only counts are kept of the Deployments, read as the server's table (no objects: a thousand
        // Deployments are 10 MB of JSON the server would encode), a page at a time.
        var byID: [String: (ready: Int, total: Int)] = [:]
        if counts {
            try await client.forEachTablePage(.deployment, namespace: nil, labelSelector: selector) { rows in
                for row in rows {
                    guard let id = Self.deploymentID(selector: row["Selector"]?.string ?? "") else { continue }
                    var v = byID[id] ?? (0, 0)
                    v.total += 1
                    if Self.available(row) { v.ready += 1 }
                    byID[id] = v
                }
            }
        }
        return try await listed.compactMap { ns -> DeploymentListing? in
            let a = ns.annotations
            let labels = ns.at("metadata", "labels")?.object ?? [:]
            guard let dir = a[DeploymentNames.directoryAnnotation] else { return nil }
            let id = labels[DeploymentNames.Label.instance]?.string ?? labels["app"]?.string ?? ns.name
            let counts = byID[id] ?? (0, 0)
            var listing = DeploymentListing(
                name: Path.basename(dir), stack: labels[DeploymentNames.Label.stack]?.string ?? "", namespace: ns.name,
                id: id, directory: dir,
                host: a[DeploymentNames.Annotation.host] ?? "",
                createdAt: ns.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse),
                expiresAt: a[DeploymentNames.Annotation.expiresAt].flatMap(Timestamps.parse),
                readyDeployments: counts.ready, deployments: counts.total,
                terminating: ns.at("status", "phase")?.string == "Terminating", madeBySo: NamespaceContents.madeBySo(ns)
            )
            listing.idleAfter = a[DeploymentNames.Annotation.idleAfter].flatMap { Int($0) }
            listing.workspaceAt = a[DeploymentNames.Annotation.workspace]
            listing.startedAt = a[DeploymentNames.Annotation.startedAt].flatMap(Timestamps.parse)
            listing.lastUsedAt = a[DeploymentNames.Annotation.lastUsed].flatMap(Timestamps.parse)
            listing.idleStoppedAt = a[DeploymentNames.Annotation.idleStopped].flatMap(Timestamps.parse)
            listing.pool = a[DeploymentNames.Annotation.pool]
            listing.claimedFrom = a[DeploymentNames.Annotation.claimedFrom]
            listing.recordRevision = a[RecordStore.Key.revision].flatMap { Int($0) }
            listing.writtenBy = a[RecordStore.Key.user].map { u in a[RecordStore.Key.host].map { "\(u)@\($0)" } ?? u }
            listing.writtenAt = a[RecordStore.Key.time].flatMap(Timestamps.parse)
            return listing
        }.sorted { ($0.name, $0.namespace) < ($1.name, $1.namespace) }
    }

    /// What is read of each namespace: its managedFields, most of its bytes, are skipped.
    static let namespaceShape = JSONShape.keys([
        "metadata": .keys(["name": .all, "labels": .all, "annotations": .all, "creationTimestamp": .all]),
        "status": .all,
    ])

    /// The deployment a Deployment belongs to: the `app` label its pods are selected by (the table's
    /// Selector cell: `app=ID,app.kubernetes.io/component=NAME`).
    static func deploymentID(selector: String) -> String? {
        selector.split(separator: ",").lazy.compactMap { term -> String? in
            let kv = term.split(separator: "=", maxSplits: 1)
            return kv.count == 2 && kv[0] == "app" ? String(kv[1]) : nil
        }.first
    }

    /// Available as `Waiter.deploymentPending` judges it, from the table's cells: every wanted replica (the
    /// Ready cell's `ready/wanted`) up to date and available. (The table has no observed generation: a
    /// Deployment changed a moment ago counts by its pods until its controller has looked.)
    static func available(_ row: [String: JSON]) -> Bool {
        let wanted = (row["Ready"]?.string ?? "").split(separator: "/").last.flatMap { Int($0) } ?? 1
        return wanted == 0
            || ((row["Up-to-date"]?.int ?? 0) >= wanted && (row["Available"]?.int ?? 0) >= wanted)
    }
}
