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

/// `so deployment start`, as a list of steps (it reads like helm's action.Install):
///
/// 1. render: the deployment's objects, in the manifest's order; then the cluster for it (a kind cluster is
///    created only for a deployment that renders);
/// 2. connect: create the namespace, or read it (who owns it, what the last start recorded), and read
///    the secret values already made — one round trip;
/// 3. lock: a Lease in the namespace (`DeploymentLock`), held until step 8;
/// 4. secrets: the generated Secret with the values kept, the compose secrets, the image pull secret;
/// 5. apply: phase by phase in the manifest's order (`Stage`), only what differs from what runs;
/// 6. prune: what this deployment owns that is no longer rendered;
/// 7. wait: until Deployments are available and Jobs complete;
/// 8. unlock: in one place, on every path (`DeploymentLock.holding`).
///
/// A re-start that would change nothing skips steps 3–6 and 8 (`unchangedRestart`). Beside these, local
/// images are loaded into kind (the workloads wait for them), and the stack's pre/post start commands
/// run before step 2 and after step 8.
public struct StartAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Requests in flight at once. Over HTTP/2 (what API servers speak) they share one connection; over
    /// HTTP/1.1 each needs a connection, and so a TLS handshake, of its own.
    static let parallelRequests = 8
    /// Namespaced kinds `start` prunes when they leave the manifest (volumes are kept: data).
    static let prunable = ["Ingress", "Deployment", "Job", "Service", "EndpointSlice", "ConfigMap", "Secret", "NetworkPolicy", "ResourceQuota", "LimitRange"]

    @discardableResult
    public func run(_ req: StartRequest) async throws -> StartReport {
        let progress = ProgressReporter(ctx: ctx, mode: req.progress)
        var rendered = try await render(req, progress: progress)
        let (model, namespace) = (rendered.model, rendered.namespace)
        if req.onlyKinds == nil { try await StartCommands(ctx: ctx, model: model).run(.pre) }
        let localImageIDs = localImageIDs(rendered, req)
        let cluster = try await connect(rendered, req)
        if model.spec.sections.egress != nil, let dns = await ClusterDNSReader(client: cluster.client).read() {
            // The DNS policy allows where this cluster's DNS answers (its kube-dns endpoints), no wider.
            rendered.manifest = try RenderAction(ctx).render(model, hostGateway: rendered.hostGateway, clusterDNS: dns, warn: false)
        }
        // Local images: their IDs go into the Deployments that run them (a rebuilt image rolls its pods); they
        // are loaded into kind beside the API requests, and awaited before the workloads and on every path.
        let imageIDs = await localImageIDs.value
        let images = loadImages(imageIDs, cluster.target, req, progress: progress)
        defer { images?.cancel() }   // only an error leaves it running
        // The Secrets' values come from the connect step's read: gathered once, whichever way the start goes.
        var report = StartReport(namespace: namespace)
        let objects = ImageLoader.stamp(try secrets(rendered, cluster, req, report: &report), ids: imageIDs)
        if try await !unchangedRestart(rendered, cluster, objects, req, report: &report, progress: progress, images: images) {
            report = try await locked(rendered, cluster, objects, req, report: report, progress: progress, images: images)
        }
        if req.onlyKinds == nil { try await StartCommands(ctx: ctx, model: model).run(.post) }
        let what = req.onlyKinds.map { "updated \($0.sorted().joined(separator: ", ")) of" } ?? "started"
        progress.done("\(what) \(model.id) in namespace \(namespace)" + (cluster.target.kindCluster.map { " on kind cluster \($0)" } ?? " (context \(cluster.target.connection.contextName))"))
        return report
    }

    /// Steps 3–8: everything that writes, under the deployment's lock.
    func locked(_ rendered: Rendered, _ cluster: Connected, _ objects: [KubeObject], _ req: StartRequest, report: StartReport,
                progress: ProgressReporter, images: Task<Void, Error>?) async throws -> StartReport {
        let (model, namespace) = (rendered.model, rendered.namespace)
        let lock = DeploymentLock(ctx: ctx, client: cluster.client, namespace: namespace, model: model, duration: req.timeout)
        return try await lock.holding {
            var report = report
            if IngressInstaller.needed(model, rendered.manifest, req) {
                // One controller per cluster: concurrent runs install it one at a time (the cluster's lock).
                _ = try await DeploymentLock.cluster(ctx: ctx, client: cluster.client, duration: req.timeout).holding(waiting: req.timeout, progress: progress) {
                    try await IngressInstaller(ctx: ctx, client: cluster.client)
                        .ensure(image: model.spec.sections.caddyIngressImage, acmeEmail: model.spec.acmeEmail, timeout: req.timeout, progress: progress)
                }
            }
            let steps = StartSteps(ctx: ctx, client: cluster.client, model: model, namespace: namespace, progress: progress, bindClaimsAhead: req.wait)
            let owned = try await steps.apply(objects, existing: cluster.existing, onlyKinds: req.onlyKinds, report: &report,
                                              beforeWorkloads: { try await images?.value })
            report.pruned = try await steps.prune(owned?.pruneCandidates ?? [])
            // Loaded whether or not a workload was applied (a failure is reported here).
            try await images?.value
            if req.wait { try await steps.wait(for: objects, timeout: req.timeout) }
            return report
        }
    }

    // MARK: 3a. nothing to change

    /// A start of a running deployment that would change nothing takes no lock. It reads what the
    /// deployment owns (one list per kind, as the locked way does); when every object is already as
    /// rendered, every Job exists and nothing is to be pruned, it only renews the Namespace's lifecycle
    /// annotations (one merge patch of times and host, which no other run's work depends on), then waits.
    /// Anything else (false) goes the locked way, which reads again under the lock: a start racing another
    /// run either finds nothing of it applied yet, or finds a difference and meets its lock.
    func unchangedRestart(_ rendered: Rendered, _ cluster: Connected, _ objects: [KubeObject], _ req: StartRequest, report: inout StartReport,
                          progress: ProgressReporter, images: Task<Void, Error>?) async throws -> Bool {
        guard let existing = cluster.existing, req.onlyKinds == nil, !IngressInstaller.needed(rendered.model, rendered.manifest, req),
              report.generatedSecrets.isEmpty, let ns = objects.first(where: { $0.kind == "Namespace" }),
              let renewal = Self.lifecycleRenewal(ns, live: existing) else { return false }
        let steps = StartSteps(ctx: ctx, client: cluster.client, model: rendered.model, namespace: rendered.namespace, progress: progress)
        let owned = try await steps.listOwned(keep: objects, kinds: StartAction.pruneKinds(existing))
        let rest = objects.filter { $0.kind != "Namespace" }
        guard owned.pruneCandidates.isEmpty,
              rest.allSatisfy({ o in o.kind == "Job" ? owned.jobs.contains(o.name) : owned.live[o.kind + "/" + o.name].map(o.isUnchanged) == true }) else { return false }
        if case .renew(let annotations) = renewal { try await cluster.client.annotate(.namespace, name: rendered.namespace, namespace: nil, annotations) }
        steps.warnKeptVolumes(owned)
        // The Namespace counts as unchanged: only its lifecycle annotations were renewed.
        report.unchanged = objects.filter { $0.kind != "Job" }.map(\.reference)
        report.skipped = objects.filter { $0.kind == "Job" }.map(\.reference)
        progress.phase("unchanged", "\(report.unchanged.count) \(StartSteps.plural("object", report.unchanged.count)) already as rendered")
        try await images?.value
        if req.wait { try await steps.wait(for: objects, timeout: req.timeout) }
        return true
    }

    static let lifecycleKeys: Set<String> = ["so.dev/started-at", "so.dev/host", "so.dev/expires-at"]

    enum Renewal {
        /// The live Namespace is what applying the rendered one would leave.
        case asIs
        /// It is once these annotations are set: the lifecycle ones and the applied hash.
        case renew([(String, String)])
    }

    /// How the live Namespace becomes what applying `ns` would leave, when the two differ at most in the
    /// lifecycle annotations; nil when anything else differs (labels, other annotations, an `expires-at`
    /// gained or lost), which takes the locked way.
    static func lifecycleRenewal(_ ns: KubeObject, live: JSON) -> Renewal? {
        if ns.isUnchanged(in: live) { return .asIs }
        var asLive = ns
        for (i, (key, _)) in asLive.annotations.enumerated() where lifecycleKeys.contains(key) {
            guard let value = live.annotations[key] else { return nil }
            asLive.annotations[i].1 = value
        }
        let liveKeys = lifecycleKeys.filter { live.annotations[$0] != nil }
        guard liveKeys.allSatisfy({ k in ns.annotations.contains { $0.0 == k } }), asLive.isUnchanged(in: live) else { return nil }
        return .renew(ns.annotations.filter { lifecycleKeys.contains($0.0) } + [(KubeObject.appliedHashAnnotation, ns.appliedHash)])
    }

    // MARK: 1. render

    struct Rendered: Sendable {
        var model: DeploymentModel
        var manifest: Manifest
        var target: ClusterTarget
        /// The address compose's host-gateway stands for, when start found one.
        var hostGateway: String? = nil
        var namespace: String { Renderer.namespace(of: model) }
    }

    /// The objects, then the cluster. extra_hosts host-gateway without the spec's `host-gateway:` depends on
    /// the cluster: the first render only checks (its warnings held back), the second one has the address.
    func render(_ req: StartRequest, progress: ProgressReporter) async throws -> Rendered {
        let model = try RenderAction(ctx).model(req.directory)
        let needsGateway = HostGatewayFinder.needed(model)
        var manifest = try RenderAction(ctx).render(model, warn: !needsGateway)
        progress.phase("connecting", "to the cluster")
        let target = try await ClusterTargets(ctx: ctx).resolve(model, req.cluster, allowCreate: true)
        var gateway: String?
        if needsGateway {
            gateway = target.kindCluster == nil ? nil : await HostGatewayFinder(ctx: ctx).kindGateway()
            manifest = try RenderAction(ctx).render(model, hostGateway: gateway)
        }
        return Rendered(model: model, manifest: manifest, target: target, hostGateway: gateway)
    }

    // MARK: 2. connect

    struct Connected: Sendable {
        var target: ClusterTarget
        var client: ClusterClient
        /// The namespace as it stood (its owner checked), or nil when this run created it.
        var existing: JSON?
        /// The generated-secrets Secret as stored, when the deployment has one.
        var storedSecrets: JSON?
    }

    /// The first round trip, three requests at once: create the namespace (only what never changes: the
    /// rest comes with its apply), read it, and read the secret values already made. A kind context from
    /// the user's kubeconfig that does not answer is stale: the cluster is found again through kind's CLI
    /// (and created when none runs).
    func connect(_ rendered: Rendered, _ req: StartRequest) async throws -> Connected {
        let (model, namespace) = (rendered.model, rendered.namespace)
        let secretName = SecretSources(ctx: ctx, model: model).hasGenerated && (req.onlyKinds?.contains("Secret") ?? true) ? DeploymentNames.generatedSecrets(model.id) : nil
        let bare = KubeObject(apiVersion: "v1", kind: "Namespace", name: namespace, annotations: [("laconic.com/deployment-dir", model.directory)])
        func attempt(_ target: ClusterTarget) async throws -> Connected {
            let client = try ctx.connect(target.connection)
            async let created = client.create(bare, fieldManager: "so")
            async let current = client.get(.namespace, name: namespace, namespace: nil)
            let secretType = try ResourceType.of(apiVersion: "v1", kind: "Secret")
            async let stored = secretName == nil ? nil : client.get(secretType, name: secretName!, namespace: namespace)
            if try await created != nil {
                _ = try? await current
                _ = try? await stored
                return Connected(target: target, client: client, existing: nil, storedSecrets: nil)
            }
            // It exists; a read that went out before another run's create landed is made again.
            var existing = try await current
            if existing == nil { existing = try await client.get(.namespace, name: namespace, namespace: nil) }
            guard let existing else {
                throw SoError("namespace \(namespace) was deleted while this start began", hint: "run the start again")
            }
            try checkOwnership(existing, namespace: namespace, model: model)
            return Connected(target: target, client: client, existing: existing, storedSecrets: try await stored)
        }
        let target = rendered.target
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
            guard req.cluster.performClusterManagement else { throw e }
            return try await attempt(try await targets.createKind(model))
        }
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

    /// The IDs of the local images on this host, read beside the first round trip (on kind, with cluster
    /// management on).
    func localImageIDs(_ rendered: Rendered, _ req: StartRequest) -> Task<[(image: String, id: String)], Never> {
        guard rendered.target.kindCluster != nil, req.cluster.performClusterManagement else { return Task { [] } }
        return Task { [ctx] in await ImageLoader(ctx: ctx).ids(manifest: rendered.manifest, model: rendered.model) }
    }

    /// Local images are compared with the kind node's (and loaded) beside the API requests; the workloads
    /// wait for them.
    func loadImages(_ ids: [(image: String, id: String)], _ target: ClusterTarget, _ req: StartRequest, progress: ProgressReporter) -> Task<Void, Error>? {
        guard let kind = target.kindCluster, req.cluster.performClusterManagement, !ids.isEmpty else { return nil }
        return Task { [ctx] in try await ImageLoader(ctx: ctx).load(ids, cluster: kind, progress: progress) }
    }

    // MARK: 4. secrets

    /// The objects this start applies (`StartManifest`), the kinds `--only` names among them.
    func secrets(_ rendered: Rendered, _ cluster: Connected, _ req: StartRequest, report: inout StartReport) throws -> [KubeObject] {
        let built = try StartManifest(ctx: ctx, model: rendered.model)
            .objects(rendered.manifest, stored: cluster.storedSecrets, ttl: req.ttl, withSecrets: req.onlyKinds?.contains("Secret") ?? true)
        report.generatedSecrets = built.madeNow
        // A namespace this run created gets its labels and annotations whatever else is applied.
        guard let only = req.onlyKinds else { return built.objects }
        return built.objects.filter { only.contains($0.kind) || (cluster.existing == nil && $0.kind == "Namespace") }
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

    /// This deployment's objects as listed by label (`StartSteps.listOwned`), for `start --dry-run`'s plan.
    func listOwned(_ client: ClusterClient, namespace: String, model: DeploymentModel, keep: [KubeObject],
                   kinds: [String] = StartAction.prunable) async throws -> OwnedObjects {
        let steps = StartSteps(ctx: ctx, client: client, model: model, namespace: namespace, progress: ProgressReporter(ctx: ctx, mode: .plain))
        let owned = try await steps.listOwned(keep: keep, kinds: kinds)
        steps.warnKeptVolumes(owned)
        return owned
    }
}
