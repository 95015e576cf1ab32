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
    /// Objects already as rendered (not sent again).
    public var unchanged: [String] = []
}

/// `so deployment start`: render, reach the cluster, apply in order with server-side apply, prune what
/// left the manifest, then wait until Deployments are available and Jobs complete.
public struct StartAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Apply phases, in order; the kinds of one phase go out together (bounded parallelism); kinds not
    /// listed go last. Policies come before any pod exists; what pods use comes before the pods. (The
    /// Namespace goes out before the lock when it is new, and beside the lists of an existing one; it is
    /// named here so that it could never go last.)
    static let phaseGroups: [[String]] = [["ResourceQuota", "LimitRange", "NetworkPolicy"],
                                          ["Namespace", "Secret", "ConfigMap", "PersistentVolume", "PersistentVolumeClaim", "Service", "EndpointSlice"],
                                          ["Deployment", "Job", "Ingress"]]
    static var phases: [String] { phaseGroups.flatMap { $0 } }
    /// Requests in flight at once. Over HTTP/2 (what API servers speak) they share one connection; over
    /// HTTP/1.1 each needs a connection, and so a TLS handshake, of its own.
    static let parallelRequests = 8
    /// Namespaced kinds `start` prunes when they leave the manifest (volumes are kept: data).
    static let prunable = ["Ingress", "Deployment", "Job", "Service", "EndpointSlice", "ConfigMap", "Secret", "NetworkPolicy", "ResourceQuota", "LimitRange"]

    @discardableResult
    public func run(_ req: StartRequest) async throws -> StartReport {
        let progress = ProgressReporter(ctx: ctx, mode: req.progress)
        let model = try RenderAction(ctx).model(req.directory)
        let namespace = Renderer.namespace(of: model)
        var report = StartReport(namespace: namespace)
        let secrets = SecretSources(ctx: ctx, model: model)
        let wantsSecrets = req.onlyKinds?.contains("Secret") ?? true

        progress.phase("connecting", "to the cluster")
        // Finding the cluster (kind's CLI, the user's kubeconfig) overlaps rendering; it only reads. A kind
        // cluster is created, and anything written, only once the deployment rendered.
        async let finding = ClusterTargets(ctx: ctx).find(model, req.cluster, allowCreate: true)
        // extra_hosts host-gateway without the spec's host-gateway: the address depends on the cluster, so the
        // first render only checks (its warnings held back) and the objects are rendered again once it is known.
        let needsGateway = HostGatewayFinder.needed(model)
        var manifest = try RenderAction(ctx).render(model, warn: !needsGateway)
        let target: ClusterTarget
        if let found = try await finding { target = found } else { target = try await ClusterTargets(ctx: ctx).createKind(model) }
        if needsGateway {
            let gateway = target.kindCluster == nil ? nil : await HostGatewayFinder(ctx: ctx).kindGateway()
            manifest = try RenderAction(ctx).render(model, hostGateway: gateway)
        }
        // Local images are compared with the node's (and loaded) beside the API requests; the workloads wait for them.
        func loadImages(_ target: ClusterTarget) -> Task<Void, Error>? {
            target.kindCluster.flatMap { [ctx, manifest, model] kind in
                req.cluster.performClusterManagement ? Task { try await ImageLoader(ctx: ctx).load(manifest: manifest, model: model, cluster: kind, progress: progress) } : nil
            }
        }
        var images = loadImages(target)
        defer { images?.cancel() }
        if req.onlyKinds == nil { try await StartCommands(ctx: ctx, model: model).run(.pre) }
        let opened = try await open(target, model: model, options: req.cluster, namespace: namespace, secret: wantsSecrets && secrets.hasGenerated ? DeploymentNames.generatedSecrets(model.id) : nil, timeout: req.timeout)
        if opened.target.kindCluster != target.kindCluster {
            images?.cancel()
            images = loadImages(opened.target)
        }
        let (client, lock, existingNamespace) = (opened.client, opened.lock, opened.namespace)

        var held = DeploymentLock.Held.namespace
        do {
            if IngressInstaller.needed(model, manifest, req) {
                try await IngressInstaller(ctx: ctx, client: client)
                    .ensure(image: model.spec.sections.caddyIngressImage, acmeEmail: model.spec.acmeEmail, timeout: req.timeout, progress: progress)
            }
            if let existingNamespace { held = try await lock.acquire(existing: existingNamespace) }
        } catch {
            if existingNamespace == nil { await lock.release(held) }
            throw error
        }
        do {
            if let i = manifest.objects.firstIndex(where: { $0.kind == "Namespace" }) {
                manifest.objects[i].annotations += lifecycleAnnotations(model: model, ttl: req.ttl) + [("so.dev/kinds", Self.recordedKinds(manifest.objects))]
            }
            var objects = manifest.objects
            if wantsSecrets {
                // Values read from the cluster, made or copied from the host; render builds the Secrets.
                let gathered = try secrets.values(stored: opened.storedSecrets)
                report.generatedSecrets = gathered.madeNow
                objects = try Renderer.adding(gathered.values, to: objects, model: model)
            }
            try await applyAndWait(req, model: model, objects: objects, namespace: namespace, client: client, progress: progress, report: &report,
                                   prune: existingNamespace.map(Self.pruneKinds) ?? [], newNamespace: existingNamespace == nil,
                                   beforeWorkloads: { [images] in try await images?.value })
        } catch {
            await lock.release(held)
            throw error
        }
        await lock.release(held)
        if req.onlyKinds == nil { try await StartCommands(ctx: ctx, model: model).run(.post) }
        progress.done((req.onlyKinds == nil ? "started" : "updated \(req.onlyKinds!.sorted().joined(separator: ", ")) of") + " \(model.id) in namespace \(namespace)" + (opened.target.kindCluster.map { " on kind cluster \($0)" } ?? " (context \(opened.target.connection.contextName))"))
        return report
    }

    struct Opened: Sendable {
        var target: ClusterTarget
        var client: ClusterClient
        var lock: DeploymentLock
        /// The namespace as it stood (its owner checked), or nil when this run created it, locked.
        var namespace: JSON?
        /// The generated-secrets Secret as stored, when the deployment has one.
        var storedSecrets: JSON?
    }

    /// The first round trip, three requests at once: create the namespace already locked by this run
    /// (it wins only if the namespace is new), read it (who owns it, who holds it) and read the secret
    /// values already made. A kind context from the user's kubeconfig that does not answer is stale: the
    /// cluster is found again through kind's CLI (and created when none runs).
    func open(_ target: ClusterTarget, model: DeploymentModel, options: ClusterOptions, namespace: String, secret: String?, timeout: Double) async throws -> Opened {
        func attempt(_ target: ClusterTarget) async throws -> Opened {
            let client = try ctx.connect(target.connection)
            let lock = DeploymentLock(ctx: ctx, client: client, namespace: namespace, model: model, duration: timeout)
            async let created = client.create(lock.lockedNamespace, fieldManager: "so")
            async let current = client.get(.namespace, name: namespace, namespace: nil)
            async let stored = secret == nil ? nil : client.get(try ResourceType.of(apiVersion: "v1", kind: "Secret"), name: secret!, namespace: namespace)
            let madeHere = try await created != nil
            let existing = madeHere ? try? await current : try await current
            let storedSecrets: JSON?
            if madeHere { _ = try? await stored; storedSecrets = nil } else { storedSecrets = try await stored }
            // Created by this run (also when a retried create found the namespace its first attempt made).
            if madeHere || existing?.annotations[DeploymentLock.holderAnnotation] == lock.holder {
                return Opened(target: target, client: client, lock: lock, namespace: nil, storedSecrets: nil)
            }
            guard let existing else {
                throw SoError("namespace \(namespace) was deleted while this start began", hint: "run the start again")
            }
            try checkOwnership(existing, namespace: namespace, model: model)
            return Opened(target: target, client: client, lock: lock, namespace: existing, storedSecrets: storedSecrets)
        }
        do {
            return try await attempt(target)
        } catch let e as SoError where target.fromUserKubeconfig && e.exitCode == SoError.exitUnreachable {
            // A stale kind-<cluster> entry in the user's kubeconfig: ask kind itself.
            guard let kind = target.kindCluster else { throw e }
            ctx.verbose("the kubeconfig's context kind-\(kind) did not answer (\(e.message)); asking kind")
            let targets = ClusterTargets(ctx: ctx)
            if let clusters = try await targets.installedKindClusters(), let found = clusters.contains(kind) ? kind : clusters.first {
                return try await attempt(try await targets.kindCLITarget(found))
            }
            guard options.performClusterManagement else { throw e }
            return try await attempt(try await targets.createKind(model))
        }
    }

    /// Applies `objects` phase by phase (the Secrets of host values already among them), prunes what left the
    /// manifest, then waits. In an existing namespace the deployment's objects are listed first (the
    /// Namespace goes out meanwhile): the lists tell what to prune, which Jobs exist, and which objects are
    /// already as rendered, so they are not sent again.
    func applyAndWait(_ req: StartRequest, model: DeploymentModel, objects all: [KubeObject], namespace: String, client: ClusterClient,
                      progress: ProgressReporter, report: inout StartReport, prune pruneKinds: [String] = StartAction.prunable,
                      newNamespace: Bool = false, beforeWorkloads: () async throws -> Void = {}) async throws {
        let started = ctx.clock.now()
        var objects = all
        // A namespace this run created gets its labels and annotations whatever else is applied.
        if let only = req.onlyKinds { objects = objects.filter { only.contains($0.kind) || (newNamespace && $0.kind == "Namespace") } }
        let keep = objects
        // A namespace this start created holds nothing of ours to list or prune.
        var owned: Owned?
        if req.onlyKinds == nil && !pruneKinds.isEmpty {
            async let listing = listOwned(client, namespace: namespace, model: model, keep: keep, kinds: pruneKinds)
            if let i = objects.firstIndex(where: { $0.kind == "Namespace" }) {
                let ns = objects.remove(at: i)
                progress.phase("applying", "1 Namespace")
                _ = try await client.apply(ns.stamped, fieldManager: "so", force: true)
                report.applied.append(ns.reference)
            }
            owned = try await listing
        }
        var workloadsReady = false
        for group in Self.phaseGroups + [["*"]] {
            var batch = objects.filter { o in group == ["*"] ? !Self.phases.contains(o.kind) : group.contains(o.kind) }
            if let owned {
                // Jobs that exist are never re-run; other objects already as rendered are not sent again.
                batch.removeAll { o in
                    if o.kind == "Job" {
                        if owned.jobs.contains(o.name) { report.skipped.append(o.reference); return true }
                    } else if owned.live[o.kind + "/" + o.name].map(o.isUnchanged) == true {
                        report.unchanged.append(o.reference); return true
                    }
                    return false
                }
            }
            guard !batch.isEmpty else { continue }
            if let owned {
                // A Service cannot switch between headless and a cluster IP in place (the API server refuses
                // "spec.clusterIPs[0]: may not change once set"): one that must is deleted, then applied.
                for o in batch where o.kind == "Service" {
                    guard let live = owned.live["Service/" + o.name], (live.at("spec", "clusterIP")?.string == "None") != Self.isHeadless(o) else { continue }
                    progress.phase("replacing", "\(o.reference): it switches between headless and a cluster IP")
                    _ = try await client.delete(try ResourceType.of(o), name: o.name, namespace: o.namespace, propagation: .background)
                }
            }
            if !workloadsReady && batch.contains(where: { $0.kind == "Deployment" || $0.kind == "Job" }) {
                try await beforeWorkloads()
                workloadsReady = true
            }
            let kinds = batch.map(\.kind).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            let noun = kinds.map { k in Self.plural(group == ["*"] ? "other object" : k, batch.filter { $0.kind == k }.count) }
            let summary = zip(kinds, noun).map { k, n in "\(batch.filter { $0.kind == k }.count) \(n)" }.joined(separator: ", ")
            progress.phase("applying", summary)
            let results = try await applyAll(batch, client: client, readJobs: !newNamespace && owned == nil) { done in
                progress.live("applied \(done)/\(batch.count): \(summary)", elapsed: ctx.clock.now().timeIntervalSince(started))
            }
            report.applied += results.applied
            report.skipped += results.skipped
        }
        if !report.unchanged.isEmpty { progress.phase("unchanged", "\(report.unchanged.count) \(Self.plural("object", report.unchanged.count)) already as rendered") }
        report.pruned = try await prune(client, namespace: namespace, candidates: owned?.pruneCandidates ?? [])
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

    /// A Service rendered with `clusterIP: None`.
    static func isHeadless(_ o: KubeObject) -> Bool {
        guard case .map(let spec)? = o.body.first(where: { $0.0 == "spec" })?.1 else { return false }
        return spec.contains { $0.0 == "clusterIP" && $0.1 == .string("None") }
    }

    static func plural(_ noun: String, _ count: Int) -> String {
        count == 1 ? noun : noun.hasSuffix("y") ? noun.dropLast() + "ies" : noun.hasSuffix("s") ? noun + "es" : noun + "s"
    }

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

    /// A namespace annotated for another deployment directory is never taken over; one being deleted
    /// cannot take new objects.
    func checkOwnership(_ ns: JSON, namespace: String, model: DeploymentModel) throws {
        if let owner = ns.annotations["laconic.com/deployment-dir"], owner != model.directory {
            throw SoError("namespace \(namespace) belongs to another deployment directory: \(owner)",
                          hint: "stop that deployment first, or set 'namespace:' in this spec to another name")
        }
        if ns.at("metadata", "deletionTimestamp")?.string != nil {
            throw SoError("namespace \(namespace) is being deleted", hint: "wait until it is gone ('kubectl get namespace \(namespace)'), then start again")
        }
    }

    /// Applies a phase with bounded concurrency, each object stamped with its `appliedHash`; Jobs are
    /// created once and never re-run (`readJobs`: look each one up first, when the start does not know).
    func applyAll(_ batch: [KubeObject], client: ClusterClient, readJobs: Bool = true, onEach: (Int) -> Void = { _ in }) async throws -> (applied: [String], skipped: [String]) {
        var applied: [String] = [], skipped: [String] = []
        try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            var next = 0
            func launch() throws {
                let o = batch[next]
                next += 1
                group.addTask {
                    if o.kind == "Job", readJobs, try await client.get(try ResourceType.of(o), name: o.name, namespace: o.namespace) != nil {
                        return (o.reference, false)
                    }
                    _ = try await client.apply(o.stamped, fieldManager: "so", force: true)
                    return (o.reference, true)
                }
            }
            while next < min(Self.parallelRequests, batch.count) { try launch() }
            while let (ref, didApply) = try await group.next() {
                if didApply { applied.append(ref) } else { skipped.append(ref) }
                onEach(applied.count + skipped.count)
                if next < batch.count { try launch() }
            }
        }
        return (applied, skipped)
    }

    /// This deployment's objects as listed by label, indexed by "Kind/name"; what is no longer rendered
    /// (volumes excepted: reported, never deleted) and the Jobs that exist.
    struct Owned: Sendable {
        var live: [String: JSON] = [:]
        var pruneCandidates: [(ResourceType, String)] = []
        var jobs: Set<String> = []
    }

    func listOwned(_ client: ClusterClient, namespace: String, model: DeploymentModel, keep: [KubeObject],
                   kinds: [String] = StartAction.prunable) async throws -> Owned {
        let selector = DeploymentNames.ownedSelector(model.id)
        // One list per kind that can hold something of ours, and the volumes, all at once.
        let types = try Self.prunable.filter { k in kinds.contains(k) || keep.contains { $0.kind == k } }.map { kind in try ResourceType.known.first { $0.kind == kind }.map { $0 } ?? ResourceType.of(apiVersion: "v1", kind: kind) }
        let volumes = ["PersistentVolumeClaim", "PersistentVolume"].map { kind in ResourceType.known.first { $0.kind == kind }! }
        let all = types + volumes
        let listed = try await withThrowingTaskGroup(of: (Int, [JSON]).self) { group in
            var next = 0
            func launch() {
                let i = next, type = all[i]
                next += 1
                group.addTask { (i, try await client.list(type, namespace: type.namespaced ? namespace : nil, labelSelector: selector)) }
            }
            while next < min(Self.parallelRequests, all.count) { launch() }
            var out = [[JSON]](repeating: [], count: all.count)
            while let (i, items) = try await group.next() {
                out[i] = items
                if next < all.count { launch() }
            }
            return out
        }
        var owned = Owned()
        for (type, items) in zip(all, listed) {
            let kind = type.kind
            for item in items {
                owned.live[kind + "/" + item.name] = item
                if kind == "Job" { owned.jobs.insert(item.name) }
                if keep.contains(where: { $0.kind == kind && $0.name == item.name }) { continue }
                if volumes.contains(type) {
                    ctx.diagnostics.warn("\(kind) \(item.name) is no longer in the deployment; kept with its data",
                                         hint: "'so deployment --dir D stop --delete-volumes' removes it")
                    continue
                }
                // Objects a controller made (EndpointSlices of our Services copy their labels) are not ours to prune.
                if !(item.at("metadata", "ownerReferences")?.array ?? []).isEmpty { continue }
                owned.pruneCandidates.append((type, item.name))
            }
        }
        return owned
    }

    /// Deletes the candidates; returns "Kind name" of each.
    func prune(_ client: ClusterClient, namespace: String, candidates: [(ResourceType, String)]) async throws -> [String] {
        var pruned: [String] = []
        for (type, name) in candidates {
            _ = try await client.delete(type, name: name, namespace: namespace, propagation: .background)
            pruned.append("\(type.kind) \(name)")
        }
        return pruned
    }
}
