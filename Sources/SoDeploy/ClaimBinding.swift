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

    /// A claim as its apply returned it that nothing binds yet: Pending, no volume named, no node chosen.
    static func isUnbound(_ c: JSON) -> Bool {
        c.at("status", "phase")?.string == "Pending"
            && (c.at("spec", "volumeName")?.string ?? "").isEmpty
            && c.at("metadata", "annotations", selectedNode) == nil
    }

    /// The cluster's one schedulable node; nil with several, or without the right to list them. `listing`: the
    /// Nodes as this process listed them a moment ago (`up` did, for its agent's image), else listed now.
    static func soleNode(_ client: ClusterClient, listing: NodeListing, now: Date) async
        -> String?
    {
        // Not allowed to list nodes (a namespace-scoped user): the scheduler chooses, as always.
        guard let nodes = await listing.nodes(client, now: now), nodes.count == 1,
            nodes[0].at("spec", "unschedulable")?.bool != true
        else { return nil }
        return nodes[0].name
    }

    /// What names a batch's new claims on the node: each as soon as the API server answers it (the provisioner's
    /// wait starts then, not once the whole batch is in).
    func naming() -> Naming { Naming(binding: self) }

    /// The cluster's one schedulable node (`soleNode`), from the Nodes this process listed (`SoContext.nodeListing`:
    /// one list however many ask, while it is fresh).
    func node() async -> String? { await Self.soleNode(client, listing: ctx.nodeListing, now: ctx.clock.now()) }

    /// A first start's new claims made as soon as it holds its Lease in the namespace it made, the node named in the
    /// create itself (issue 66): the provisioner works while the record's revision is written and the rest is rendered
    /// and applied, where it started once the claims' batch went out, and only after a second request named the node.
    /// Only where a claim arriving before the namespace's policies admits nothing they would refuse
    /// (`StartSteps.claimsAhead`). The claims the creates named (their apply, in the batch as before, keeps the
    /// annotation: a create's fields are not the apply's to remove); none when the cluster has several nodes or its
    /// nodes cannot be listed, and a create that fails (or finds the claim there) leaves it to the batch, as before.
    func ahead(_ objects: [KubeObject]) -> Task<[String], Never>? {
        let claims = objects.filter { c in
            c.isKind(.persistentVolumeClaim) && !c.annotations.contains { $0.0 == Self.selectedNode }
        }
        guard !claims.isEmpty, StartSteps.claimsAhead(objects) else { return nil }
        return Task { [client, self] in
            guard let node = await self.node() else { return [] }
            return await withTaskGroup(of: String?.self) { group in
                for claim in claims {
                    var named = claim
                    named.annotations.append((Self.selectedNode, node))
                    group.addTask { [named] in
                        // Not made here (refused, or there already): the batch's apply makes and names it, as before.
                        (try? await client.create(named, fieldManager: "so")) == nil ? nil : named.name
                    }
                }
                var made: [String] = []
                for await name in group { if let name { made.append(name) } }
                return made.sorted()
            }
        }
    }

    /// New claims named on the cluster's one node as their applies answer.
    struct Naming: Sendable {
        let binding: ClaimBinding

        /// Names the node on a claim as its apply answered (the annotation the scheduler would set, which
        /// provisioners read) when nothing binds it yet; the claim's name when named.
        func name(_ answer: JSON) async throws -> String? {
            guard ClaimBinding.isUnbound(answer), let node = await binding.node() else { return nil }
            try await binding.client.annotate(
                .persistentVolumeClaim, name: answer.name, namespace: binding.namespace,
                [(ClaimBinding.selectedNode, node)])
            return answer.name
        }

        /// The claims named, being provisioned; nil when none was.
        func started(_ claims: [String], patience: Double = 5) async -> Started? {
            guard !claims.isEmpty, let node = await binding.node() else { return nil }
            binding.progress.phase(
                "provisioning", "\(claims.count) \(claims.count == 1 ? "volume" : "volumes") on node \(node)")
            return Started(binding: binding, claims: Set(claims), start: binding.ctx.clock.now(), patience: patience)
        }
    }

    /// Claims named on the node, being provisioned.
    struct Started: Sendable {
        let binding: ClaimBinding
        let claims: Set<String>
        let start: Date
        let patience: Double

        /// Until every claim is bound, or `patience` has passed since they were named (the scheduler then waits).
        func waitBound() async throws {
            let (ctx, client) = (binding.ctx, binding.client)
            let claimType = ResourceType.persistentVolumeClaim
            var pending = claims
            // Looked at again as soon as a claim changes (bound), else every tenth of a second; looked at first at
            // once (claims made as the Lease was taken are often bound by now).
            let watch = ChangeWatch(client, namespace: binding.namespace, [(claimType, nil)], seconds: patience)
            defer { watch.stop() }
            while true {
                for c in try await client.list(claimType, namespace: binding.namespace, labelSelector: nil)
                where c.at("status", "phase")?.string == "Bound" {
                    pending.remove(c.name)
                }
                guard !pending.isEmpty && ctx.clock.now().timeIntervalSince(start) < patience else { return }
                try await watch.pause(ctx.clock, seconds: 0.1)
            }
        }
    }

    /// `batch` as what can go out while `claims` are provisioned (no pod of it mounts one) and the rest: the
    /// workloads whose pod template mounts none of them first.
    static func partition(_ batch: [KubeObject], notMounting claims: Set<String>) -> (
        early: [KubeObject], late: [KubeObject]
    ) {
        var early: [KubeObject] = []
        var late: [KubeObject] = []
        for o in batch {
            let workload = o.isKind(.deployment) || o.isKind(.job) || o.kind == "StatefulSet"
            if workload && mounted(o).isDisjoint(with: claims) { early.append(o) } else { late.append(o) }
        }
        return (early, late)
    }

    /// The claims a workload's pods mount: its pod template's `persistentVolumeClaim` volumes.
    static func mounted(_ o: KubeObject) -> Set<String> {
        guard case .list(let volumes)? = o.spec?.field("template")?.field("spec")?.field("volumes") else { return [] }
        return Set(
            volumes.compactMap { v -> String? in
                guard case .string(let name)? = v.field("persistentVolumeClaim")?.field("claimName") else {
                    return nil
                }
                return name
            })
    }
}
