import Foundation
import SoActions
import SoBasics
import SoKube

/// New volumes bound before the workloads that use them go out, on a cluster of one node (kind).
///
/// A claim of a `WaitForFirstConsumer` class (kind's `standard`) is provisioned only once the scheduler
/// has a pod for it and names the node on the claim; the scheduler then checks the binding once a second
/// before it places the pod. Every first start with a volume paid up to a second for that check. With one
/// node there is no choice to wait for: start names the node on its new claims itself (the annotation the
/// scheduler would set, which provisioners read) and applies the workloads once the claims are bound, so
/// the scheduler places their pods at once. With several nodes, without the right to list nodes, or when
/// provisioning takes longer than `patience`, the scheduler does it as before.
struct ClaimBinding: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String
    let progress: ProgressReporter

    static let selectedNode = "volume.kubernetes.io/selected-node"

    /// Claims as the apply returned them that nothing binds yet: Pending, no volume named, no node chosen.
    static func unbound(_ claims: [JSON]) -> [String] {
        claims.filter { c in
            c.at("status", "phase")?.string == "Pending"
                && (c.at("spec", "volumeName")?.string ?? "").isEmpty
                && c.at("metadata", "annotations", selectedNode) == nil
        }.map(\.name)
    }

    func bindAhead(_ claims: [String], patience: Double = 5) async throws {
        guard !claims.isEmpty else { return }
        let nodeType = ResourceType.node
        let claimType = ResourceType.persistentVolumeClaim
        // Not allowed to list nodes (a namespace-scoped user): the scheduler chooses, as always.
        guard let nodes = try? await client.list(nodeType, namespace: nil, labelSelector: nil), nodes.count == 1,
            nodes[0].at("spec", "unschedulable")?.bool != true
        else { return }
        let node = nodes[0].name
        for claim in claims {
            try await client.annotate(claimType, name: claim, namespace: namespace, [(Self.selectedNode, node)])
        }
        progress.phase("provisioning", "\(claims.count) \(claims.count == 1 ? "volume" : "volumes") on node \(node)")
        let start = ctx.clock.now()
        var pending = Set(claims)
        // Looked at again as soon as a claim changes (bound), else every tenth of a second.
        let watch = ChangeWatch(client, namespace: namespace, [(claimType, nil)], seconds: patience)
        defer { watch.stop() }
        while !pending.isEmpty && ctx.clock.now().timeIntervalSince(start) < patience {
            try await watch.pause(ctx.clock, seconds: 0.1)
            for c in try await client.list(claimType, namespace: namespace, labelSelector: nil)
            where c.at("status", "phase")?.string == "Bound" {
                pending.remove(c.name)
            }
        }
    }
}
