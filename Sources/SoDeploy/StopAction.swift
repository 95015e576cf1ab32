import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so deployment stop`: deletes the deployment's labelled objects and returns when they are gone.
/// Volumes (and the generated-secrets Secret, which data in them may depend on) stay unless
/// `--delete-volumes`; the namespace stays unless `--delete-namespace`; the kind cluster is deleted only
/// with `--perform-cluster-management`. A workspace's volume is not deleted while its checkout holds work
/// that is not pushed, unless `--discard` (the request's `VolumeGuard`: SoWorkspace's `WorkGuard`, as `so down`).
public struct StopAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    static let order: [ResourceType] = [
        .ingress, .deployment, .job, .service, .endpointSlice, .configMap, .secret, .networkPolicy, .resourceQuota,
        .limitRange, .pod,
    ]

    @discardableResult
    public func run(_ req: StopRequest) async throws -> [String] {
        let dir = ctx.absolute(req.directory)
        let model = try DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: ctx.diagnostics)
        let namespace = Renderer.namespace(of: model)
        if req.deleteVolumes, let volumeGuard = req.volumeGuard {
            try await volumeGuard.check(discard: req.discard, dryRun: req.dryRun)
        }
        let target = try await ClusterTargets(ctx: ctx).resolve(model, req.cluster, allowCreate: false)
        let client = try ctx.connect(target.connection)
        // Under the deployment's Lease (a start, restart or rotation in progress is waited for, up to --timeout),
        // unless nothing of it exists or nothing is deleted.
        let exists = req.dryRun ? false : try await client.get(.namespace, name: namespace, namespace: nil) != nil
        let lock =
            exists
            ? DeploymentLock(ctx: ctx, client: client, namespace: namespace, model: model, duration: req.timeout) : nil
        let (deleted, namespaceDeleted) = try await DeploymentLock.holding(
            lock, waiting: req.timeout, progress: ProgressReporter(ctx: ctx, mode: .auto)
        ) {
            try await deleteObjects(req, model: model, dir: dir, namespace: namespace, client: client)
        }
        if req.dryRun {
            if req.cluster.performClusterManagement, let kind = target.kindCluster,
                try await otherDeployments(client, besides: namespace, cluster: kind).isEmpty
            {
                ctx.console.out("would delete kind cluster \(kind)")
            }
            ctx.say(
                "dry run: \(deleted.count) \(English.plural("object", deleted.count)) of \(model.id) would be deleted; nothing was changed"
            )
            return deleted.map { "\($0.0.kind) \($0.1)" }
        }
        if req.cluster.performClusterManagement, let kind = target.kindCluster,
            try await otherDeployments(client, besides: namespace, cluster: kind).isEmpty
        {
            ctx.say("deleting kind cluster \(kind)")
            let r = try await ctx.processes.run(
                ["kind", "delete", "cluster", "--name", kind], workingDirectory: nil,
                environment: ctx.environment, timeout: 300)
            guard r.exitCode == 0 else {
                throw SoError(
                    "cannot delete kind cluster \(kind): \(r.lastErrorLine)",
                    hint: "run 'kind delete cluster --name \(kind)' by hand")
            }
        }
        ctx.say(
            "stopped \(model.id): deleted \(deleted.count) \(English.plural("object", deleted.count))"
                + (req.deleteVolumes ? " (volumes too)" : "; volumes kept")
                + (namespaceDeleted ? (req.waitForNamespace ? ", namespace deleted" : ", namespace being deleted") : "")
        )
        return deleted.map { "\($0.0.kind) \($0.1)" }
    }

    /// The deployment's objects deleted (or, in a dry run, named) kind by kind, waited for until gone; then its
    /// namespace when asked and it holds nothing of others (`namespaceDeleted`).
    func deleteObjects(
        _ req: StopRequest, model: DeploymentModel, dir: String, namespace: String,
        client: ClusterClient
    ) async throws -> (deleted: [(ResourceType, String, String?)], namespaceDeleted: Bool) {
        let selector = DeploymentNames.selector(model.id)
        var types = Self.order
        if req.deleteVolumes { types.append(.persistentVolumeClaim) }
        var deleted: [(ResourceType, String, String?)] = []
        func delete(_ type: ResourceType, _ name: String, _ namespace: String?) async throws {
            if req.dryRun {
                ctx.console.out("would delete \(type.kind) \(namespace.map { "\($0)/" } ?? "")\(name)")
                deleted.append((type, name, namespace))
            } else if try await client.delete(type, name: name, namespace: namespace, propagation: .background) {
                deleted.append((type, name, namespace))
            }
        }
        // The volumes its own claims name, and those bound to no other namespace's claim (a PersistentVolume's label
        // is anyone's to write who made the volume).
        var claimed: Set<String> = []
        for type in types {
            for item in try await Self.own(type, of: model.id, in: namespace, client: client) {
                if type == .persistentVolumeClaim, let v = item.at("spec", "volumeName")?.string { claimed.insert(v) }
                if type == .secret, !req.deleteVolumes, item.name == DeploymentNames.generatedSecrets(model.id) {
                    continue
                }
                try await delete(type, item.name, namespace)
            }
        }
        if req.deleteVolumes {
            let pv = ResourceType.persistentVolume
            for item in try await client.list(pv, namespace: nil, labelSelector: selector)
            where claimed.contains(item.name)
                || (item.at("spec", "claimRef", "namespace")?.string ?? namespace) == namespace
            {
                try await delete(pv, item.name, nil)
            }
        }
        if !req.dryRun { try await waitGone(client, deleted, timeout: req.timeout) }
        var namespaceDeleted = false
        if req.deleteNamespace {
            let ns = ResourceType.namespace
            if let existing = try await client.get(ns, name: namespace, namespace: nil) {
                if let owner = existing.annotations[DeploymentNames.directoryAnnotation], owner != dir,
                    !DeploymentNames.sameDeployment(existing, model.id)
                {
                    throw SoError(
                        "namespace \(namespace) belongs to another deployment directory: \(owner)",
                        hint: "it was left in place; stop that deployment instead")
                }
                // Deleted whole only when it holds nothing of others (a namespace so did not make may).
                let others = try await NamespaceContents(client: client)
                    .others(
                        in: namespace, madeBySo: NamespaceContents.madeBySo(existing), deployment: model.id)
                if !others.isEmpty {
                    // Removed as the namespace would have taken them: the deployment's record goes too.
                    if !req.dryRun {
                        try await RecordStore(client: client, namespace: namespace, deployment: model.id).removeAll()
                    }
                    let kept = NamespaceContents.keptWarning(namespace, others: others)
                    ctx.diagnostics.warn(kept.message, hint: kept.hint)
                } else if req.dryRun {
                    ctx.console.out("would delete Namespace \(namespace)")
                } else {
                    _ = try await client.delete(ns, name: namespace, namespace: nil, propagation: .background)
                    if req.waitForNamespace { try await waitGone(client, [(ns, namespace, nil)], timeout: req.timeout) }
                    namespaceDeleted = true
                }
            }
        }
        return (deleted, namespaceDeleted)
    }

    /// Deployment `id`'s objects of `type` in `namespace`, by its label (its Jobs' pods carry `app=<id>-job`).
    static func own(_ type: ResourceType, of id: String, in namespace: String, client: ClusterClient) async throws
        -> [JSON]
    {
        let selectors = [DeploymentNames.selector(id)] + (type == .pod ? [DeploymentNames.selector("\(id)-job")] : [])
        var found: [JSON] = []
        for selector in selectors {
            found += try await client.list(type, namespace: namespace, labelSelector: selector)
        }
        return found
    }

    /// The host's kind cluster is every kind deployment's: it is deleted only when no other `so` deployment
    /// (a namespace `so` made for another deployment directory, not being deleted) runs on it. Otherwise it is
    /// kept, with a warning naming them.
    func otherDeployments(_ client: ClusterClient, besides namespace: String, cluster: String) async throws -> [String]
    {
        let others = try await ListAction(ctx).list(client).filter { $0.namespace != namespace && !$0.terminating }
        if !others.isEmpty {
            let names =
                others.prefix(3).map { "\($0.name) (\($0.namespace))" }.joined(separator: ", ")
                + (others.count > 3 ? ", …" : "")
            let run =
                "\(others.count) other \(English.plural("deployment", others.count)) \(others.count == 1 ? "runs" : "run")"
            ctx.diagnostics.warn(
                "kind cluster \(cluster) kept: \(run) on it: \(names)",
                hint:
                    "stop them first ('so deployment list' names them), or delete it anyway with 'kind delete cluster --name \(cluster)'"
            )
        }
        return others.map(\.namespace)
    }

    /// Polls until every deleted object is gone, bounded by `timeout`: the objects looked at together, after
    /// 0.1 s, then twice as long each time up to 1 s (most go at once; pods go when their containers stop,
    /// usually within a second or two).
    func waitGone(_ client: ClusterClient, _ objects: [(ResourceType, String, String?)], timeout: Double) async throws {
        let start = ctx.clock.now()
        var remaining = objects
        var pause = 0.1
        while !remaining.isEmpty {
            remaining = try await withThrowingTaskGroup(of: (ResourceType, String, String?)?.self) { group in
                var still: [(ResourceType, String, String?)] = []
                for (i, o) in remaining.enumerated() {
                    if i >= StartAction.parallelRequests, let left = try await group.next() ?? nil {
                        still.append(left)
                    }
                    group.addTask { try await client.get(o.0, name: o.1, namespace: o.2) == nil ? nil : o }
                }
                for try await o in group { if let o { still.append(o) } }
                return still
            }
            if remaining.isEmpty { return }
            if ctx.clock.now().timeIntervalSince(start) >= timeout {
                let (type, name, _) = remaining[0]
                throw SoError(
                    "timed out after \(Int(timeout))s waiting for \(remaining.count) object(s) to go, e.g. \(type.kind) \(name)",
                    hint: "a finalizer may hold it; look at 'kubectl get \(type.plural) \(name) -o yaml'",
                    exitCode: SoError.exitTimeout)
            }
            try await ctx.clock.sleep(seconds: pause)
            pause = min(pause * 2, 1)
        }
    }
}
