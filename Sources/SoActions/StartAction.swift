import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

public struct StartRequest: Sendable {
    public var directory: String
    public var cluster: ClusterOptions
    public var wait: Bool
    public var timeout: Double
    public var progress: ProgressMode
    /// Apply only these kinds, and prune nothing (`update-envs` applies Deployments alone).
    public var onlyKinds: Set<String>?
    /// Overrides the spec's `ttl:` (seconds from this start until `cleanup --expired` may remove it).
    public var ttl: Double?

    public init(directory: String, cluster: ClusterOptions = ClusterOptions(), wait: Bool = true, timeout: Double = 300, progress: ProgressMode = .auto,
                onlyKinds: Set<String>? = nil, ttl: Double? = nil) {
        self.onlyKinds = onlyKinds
        self.ttl = ttl
        self.directory = directory
        self.cluster = cluster
        self.wait = wait
        self.timeout = timeout
        self.progress = progress
    }
}

public struct StartReport: Sendable {
    public var namespace: String
    public var applied: [String] = []
    public var skipped: [String] = []
    public var pruned: [String] = []
    public var generatedSecrets: [String] = []
}

/// `so deployment start`: render, reach the cluster, apply in order with server-side apply, prune what
/// left the manifest, then wait until Deployments are available and Jobs complete.
public struct StartAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Apply phases, in order; the kinds of one phase go out together (bounded parallelism); kinds not
    /// listed go last. Policies come before any pod exists; what pods use comes before the pods.
    static let phaseGroups: [[String]] = [["Namespace"], ["ResourceQuota", "LimitRange", "NetworkPolicy"],
                                          ["Secret", "ConfigMap", "PersistentVolume", "PersistentVolumeClaim", "Service", "EndpointSlice"],
                                          ["Deployment", "Job", "Ingress"]]
    static var phases: [String] { phaseGroups.flatMap { $0 } }
    /// Objects applied at once. Each request in flight needs a connection of its own (HTTP/1.1), and a
    /// new connection costs a TLS handshake: a few at a time beat many on a small deployment.
    static let parallelApplies = 4
    /// Namespaced kinds `start` prunes when they leave the manifest (volumes are kept: data).
    static let prunable = ["Ingress", "Deployment", "Job", "Service", "EndpointSlice", "ConfigMap", "Secret", "NetworkPolicy", "ResourceQuota", "LimitRange"]

    @discardableResult
    public func run(_ req: StartRequest) async throws -> StartReport {
        let progress = ProgressReporter(ctx: ctx, mode: req.progress)
        var (model, manifest) = try RenderAction(ctx).load(req.directory)
        let namespace = manifest.objects.first { $0.kind == "Namespace" }?.name ?? model.id
        var report = StartReport(namespace: namespace)

        progress.phase("connecting", "to the cluster")
        let target = try await ClusterTargets(ctx: ctx).resolve(model, req.cluster, allowCreate: true)
        let client = try ctx.connect(target.connection)
        if let kind = target.kindCluster, req.cluster.performClusterManagement {
            try await ImageLoader(ctx: ctx).load(manifest: manifest, model: model, cluster: kind, progress: progress)
        }

        if IngressInstaller.needed(model, manifest, req) {
            try await IngressInstaller(ctx: ctx, client: client)
                .ensure(image: model.spec.sections.caddyIngressImage, acmeEmail: model.spec.acmeEmail, timeout: req.timeout, progress: progress)
        }
        let existingNamespace = try await checkOwnership(client, namespace: namespace, model: model)
        if var ns = manifest.objects.first(where: { $0.kind == "Namespace" }) {
            ns.annotations += lifecycleAnnotations(model: model, ttl: req.ttl) + [("so.dev/kinds", Self.recordedKinds(manifest.objects))]
            if let i = manifest.objects.firstIndex(where: { $0.kind == "Namespace" }) { manifest.objects[i] = ns }
            _ = try await client.apply(ns, fieldManager: "so", force: true)
        }
        let lock = DeploymentLock(ctx: ctx, client: client, namespace: namespace, model: model, duration: req.timeout)
        try await lock.acquire()
        do {
            try await applyAndWait(req, model: model, manifest: manifest, namespace: namespace, client: client, progress: progress, report: &report,
                                   prune: existingNamespace.map(Self.pruneKinds) ?? [])
        } catch {
            await lock.release()
            throw error
        }
        await lock.release()
        progress.done((req.onlyKinds == nil ? "started" : "updated \(req.onlyKinds!.sorted().joined(separator: ", ")) of") + " \(model.id) in namespace \(namespace)" + (target.kindCluster.map { " on kind cluster \($0)" } ?? " (context \(target.connection.contextName))"))
        return report
    }

    func applyAndWait(_ req: StartRequest, model: DeploymentModel, manifest: Manifest, namespace: String, client: ClusterClient,
                      progress: ProgressReporter, report: inout StartReport, prune pruneKinds: [String] = StartAction.prunable) async throws {

        let started = ctx.clock.now()
        var objects = manifest.objects
        if let only = req.onlyKinds { objects = objects.filter { only.contains($0.kind) } }
        let secrets = GeneratedSecrets(ctx: ctx, model: model, namespace: namespace)
        if secrets.isNeeded && (req.onlyKinds?.contains("Secret") ?? true) {
            let existing = try await client.get(try ResourceType.of(apiVersion: "v1", kind: "Secret"), name: secrets.name, namespace: namespace)
            let desired = try secrets.desired(existing: existing)
            report.generatedSecrets = desired.generated
            let at = objects.firstIndex { $0.kind != "Namespace" } ?? objects.count
            objects.insert(desired.object, at: at)
        }

        if req.onlyKinds?.contains("Secret") ?? true {
            let composeSecrets = try ComposeSecrets(ctx: ctx, model: model, namespace: namespace).objects()
            let at = objects.firstIndex { $0.kind != "Namespace" } ?? objects.count
            objects.insert(contentsOf: composeSecrets, at: at)
        }
        // The Namespace went out before the lock; it is applied again only if something changed it.
        let namespaceApplied = manifest.objects.first { $0.kind == "Namespace" }
        for group in Self.phaseGroups + [["*"]] {
            let batch = objects.filter { o in
                group == ["*"] ? !Self.phases.contains(o.kind) : group.contains(o.kind) && !(o.kind == "Namespace" && o == namespaceApplied)
            }
            guard !batch.isEmpty else { continue }
            let kinds = batch.map(\.kind).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            let noun = kinds.map { k in Self.plural(group == ["*"] ? "other object" : k, batch.filter { $0.kind == k }.count) }
            let summary = zip(kinds, noun).map { k, n in "\(batch.filter { $0.kind == k }.count) \(n)" }.joined(separator: ", ")
            progress.phase("applying", summary)
            let results = try await applyAll(batch, client: client) { done in
                progress.live("applied \(done)/\(batch.count): \(summary)", elapsed: ctx.clock.now().timeIntervalSince(started))
            }
            report.applied += results.applied
            report.skipped += results.skipped
        }
        // A namespace this start created holds nothing of ours to prune.
        if req.onlyKinds == nil && !pruneKinds.isEmpty {
            report.pruned = try await prune(client, namespace: namespace, model: model, keep: objects, kinds: pruneKinds)
        }
        if !report.pruned.isEmpty { progress.phase("pruned", report.pruned.joined(separator: ", ")) }

        if req.wait {
            progress.phase("waiting", "for Deployments to be available and Jobs to complete (timeout \(Int(req.timeout))s)")
            try await Waiter(ctx: ctx, client: client, namespace: namespace, selector: "app.kubernetes.io/instance=\(model.id)").wait(for: objects, timeout: req.timeout, progress: progress)
        }
    }

    /// When and where this start happened, and when the deployment expires (`ttl`): what
    /// `so deployment list` and `so cleanup` read.
    func lifecycleAnnotations(model: DeploymentModel, ttl: Double?) -> [(String, String)] {
        let now = ctx.clock.now()
        var a: [(String, String)] = [("so.dev/started-at", Timestamps.rfc3339(now)), ("so.dev/host", ctx.hostName)]
        if let ttl = ttl ?? model.spec.ttl { a.append(("so.dev/expires-at", Timestamps.rfc3339(now.addingTimeInterval(ttl)))) }
        return a
    }

    static func plural(_ noun: String, _ count: Int) -> String {
        count == 1 ? noun : noun.hasSuffix("y") ? noun.dropLast() + "ies" : noun.hasSuffix("s") ? noun + "es" : noun + "s"
    }

    /// A namespace annotated for another deployment directory is never taken over.
    /// The kinds a start applies, recorded on the namespace: the next start lists only these (and the
    /// current ones) to prune, instead of every prunable kind.
    static func recordedKinds(_ objects: [KubeObject]) -> String {
        Set(objects.map(\.kind) + ["Secret"]).intersection(prunable).sorted().joined(separator: ",")
    }

    /// What to list for pruning in an existing namespace: the kinds recorded by the last start (all
    /// prunable kinds when it did not record them).
    static func pruneKinds(_ namespace: JSON) -> [String] {
        guard let recorded = namespace.annotations["so.dev/kinds"] else { return prunable }
        let kinds = Set(recorded.split(separator: ",").map(String.init))
        return prunable.filter { kinds.contains($0) }
    }

    /// Returns the namespace when it exists (a new one has nothing to prune).
    @discardableResult
    func checkOwnership(_ client: ClusterClient, namespace: String, model: DeploymentModel) async throws -> JSON? {
        guard let ns = try await client.get(try ResourceType.of(apiVersion: "v1", kind: "Namespace"), name: namespace, namespace: nil) else { return nil }
        if let owner = ns.annotations["laconic.com/deployment-dir"], owner != model.directory {
            throw SoError("namespace \(namespace) belongs to another deployment directory: \(owner)",
                          hint: "stop that deployment first, or set 'namespace:' in this spec to another name")
        }
        return ns
    }

    /// Applies a phase with bounded concurrency; Jobs are created once and never re-run.
    func applyAll(_ batch: [KubeObject], client: ClusterClient, onEach: (Int) -> Void = { _ in }) async throws -> (applied: [String], skipped: [String]) {
        var applied: [String] = [], skipped: [String] = []
        try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            var next = 0
            func launch() throws {
                let o = batch[next]
                next += 1
                group.addTask {
                    if o.kind == "Job", try await client.get(try ResourceType.of(o), name: o.name, namespace: o.namespace) != nil {
                        return (o.reference, false)
                    }
                    _ = try await client.apply(o, fieldManager: "so", force: true)
                    return (o.reference, true)
                }
            }
            while next < min(Self.parallelApplies, batch.count) { try launch() }
            while let (ref, didApply) = try await group.next() {
                if didApply { applied.append(ref) } else { skipped.append(ref) }
                onEach(applied.count + skipped.count)
                if next < batch.count { try launch() }
            }
        }
        return (applied, skipped)
    }

    /// Deletes this deployment's objects that are no longer rendered (volumes excepted).
    func prune(_ client: ClusterClient, namespace: String, model: DeploymentModel, keep: [KubeObject], kinds: [String] = StartAction.prunable) async throws -> [String] {
        let selector = "app.kubernetes.io/instance=\(model.id),app.kubernetes.io/managed-by=so"
        var pruned: [String] = []
        // One list per kind that can hold something of ours; then the deletes.
        let types = try Self.prunable.filter { k in kinds.contains(k) || keep.contains { $0.kind == k } }.map { kind in try ResourceType.known.first { $0.kind == kind }.map { $0 } ?? ResourceType.of(apiVersion: "v1", kind: kind) }
        let listed = try await withThrowingTaskGroup(of: (Int, [JSON]).self) { group in
            // At most 4 at once: each parallel request may need a connection (a TLS handshake) of its own.
            var next = 0
            func launch() {
                let i = next, type = types[i]
                next += 1
                group.addTask { (i, try await client.list(type, namespace: namespace, labelSelector: selector)) }
            }
            while next < min(4, types.count) { launch() }
            var out = [[JSON]](repeating: [], count: types.count)
            while let (i, items) = try await group.next() {
                out[i] = items
                if next < types.count { launch() }
            }
            return out
        }
        for (type, items) in zip(types, listed) {
            let kind = type.kind
            for item in items {
                let name = item.name
                if keep.contains(where: { $0.kind == kind && $0.name == name }) { continue }
                // Objects a controller made (EndpointSlices of our Services copy their labels) are not ours to prune.
                if !(item.at("metadata", "ownerReferences")?.array ?? []).isEmpty { continue }
                _ = try await client.delete(type, name: name, namespace: namespace, propagation: .background)
                pruned.append("\(kind) \(name)")
            }
        }
        for kind in ["PersistentVolumeClaim", "PersistentVolume"] {
            let type = ResourceType.known.first { $0.kind == kind }!
            for item in try await client.list(type, namespace: type.namespaced ? namespace : nil, labelSelector: selector)
                where !keep.contains(where: { $0.kind == kind && $0.name == item.name }) {
                ctx.diagnostics.warn("\(kind) \(item.name) is no longer in the deployment; kept with its data",
                                     hint: "'so deployment --dir D stop --delete-volumes' removes it")
            }
        }
        return pruned
    }
}
