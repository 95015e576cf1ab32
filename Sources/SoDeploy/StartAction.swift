import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so deployment start`, as one list of steps, each run once (it reads like helm's action.Install):
///
/// 1. render: the deployment's objects, in the manifest's order (no cluster yet);
/// 2. lock: find the cluster, or create the deployment's kind cluster (here only, under the host's lock);
///    then take the deployment's Lease (`DeploymentLock`) with one create, the namespace created first when
///    there is none; a Lease another run holds is waited for (up to --timeout, named); renewed while held,
///    given up in step 10. Every writer of the deployment holds it;
/// 3. read: under the lock, the Namespace (who owns it, what the last start recorded) and the secret values
///    already made, in one round trip; values to be made are made, once; in an existing namespace, what the
///    deployment owns (one list per kind the Namespace records);
/// 4. unchanged: a re-start that would change nothing ends the changes here (steps 5–7 are not taken): it
///    renews only the Namespace's lifecycle annotations (one merge patch);
/// 5. ingress: the ingress controller when an Ingress needs it (under the cluster's lock);
/// 6. apply: phase by phase in the manifest's order (`Stage`), only what differs from what runs;
/// 7. prune: what this deployment owns that is no longer rendered;
/// 8. load images: local images loaded into kind (begun beside step 3; the workloads wait for them; a
///    failure is reported on every path);
/// 9. wait: until Deployments are available and Jobs complete;
/// 10. unlock: in one place, on every path (`DeploymentLock.held`).
///
/// The stack's pre/post start commands run before step 2 and after step 10. The local images' IDs are read
/// beside steps 2 and 3.
///
/// `--dry-run` (`StartRequest.dryRun`) takes the same steps with their writes in dry-run mode: no cluster or
/// namespace is created, no lock taken, nothing loaded, generated, run or waited for; each apply is a
/// server-side dry run and each prune only named. The report's `plan` says what start would do.
public struct StartAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// Requests in flight at once. Over HTTP/2 (what API servers speak) they share one connection; over
    /// HTTP/1.1 each needs a connection, and so a TLS handshake, of its own. 16: a workspace's first batch (its
    /// policies and its pods' inputs, 14 objects) goes out in one round trip, where 8 made it two; with four ups at
    /// once on a busy API server the second round cost 0.2-1.4 s of each (issue 66).
    static let parallelRequests = 16
    /// Namespaced kinds `start` prunes when they leave the manifest (volumes are kept: data).
    static let prunable = [
        "Ingress", "Deployment", "Job", "Service", "EndpointSlice", "ConfigMap", "Secret", "NetworkPolicy",
        "ResourceQuota", "LimitRange",
    ]

    @discardableResult
    public func run(_ req: StartRequest) async throws -> StartReport {
        // A directory the record's gate wrote: what is still the record's is checked again before anything runs.
        try RecordGate(ctx).recheck(ctx.absolute(req.directory))
        return try await withholding(req).started(req)
    }

    /// This start, or one whose environment lacks what it must not copy into the cluster: in a directory written
    /// from the cluster's record, the variables the record names that this machine did not agree to copy
    /// (`RecordTrust.notCopied`; the values the cluster holds are kept), unless `--copy-secret-env`.
    func withholding(_ req: StartRequest) throws -> StartAction {
        guard !req.copySecretEnv, RecordFiles.step(in: ctx.absolute(req.directory), fs: ctx.fs)?.copies != nil else {
            return self
        }
        // A directory that does not load is the start's to refuse, with the reason.
        guard let model = try? RenderAction(ctx).model(req.directory) else { return self }
        let names = RecordTrust.notCopied(model, fs: ctx.fs).filter { ctx.environment[$0] != nil }
        guard !names.isEmpty else { return self }
        ctx.diagnostics.warn(
            "\(names.joined(separator: ", ")) \(names.count == 1 ? "is" : "are") not copied from your environment: "
                + "\(model.directory) was written from the cluster's record, which names "
                + "\(names.count == 1 ? "it" : "them") (the values the cluster holds are kept)",
            hint: "to put your own values into the cluster: start --copy-secret-env")
        var acting = ctx
        for name in names { acting.environment[name] = nil }
        return StartAction(acting)
    }

    func started(_ req: StartRequest) async throws -> StartReport {
        // A dry run says only its plan.
        var quiet = ctx
        quiet.options.quiet = quiet.options.quiet || req.dryRun
        let progress = ProgressReporter(ctx: quiet, mode: req.progress)
        // 1. render
        var rendered = try render(req)
        let (model, namespace) = (rendered.model, rendered.namespace)
        if req.onlyKinds == nil && !req.dryRun { try await StartCommands(ctx: ctx, model: model).run(.pre) }
        // 2. lock (the local images' IDs are read meanwhile; they are loaded into kind beside the API requests)
        guard let target = try await clusterTarget(&rendered, req, progress: progress) else {
            // A dry run, and no cluster yet: start would create it; nothing can be checked.
            if HostGatewayFinder.needed(model) { rendered.manifest = try RenderAction(ctx).render(model) }
            var report = StartReport(namespace: namespace)
            report.plan = rendered.manifest.objects.map {
                PlannedChange(
                    action: .create, kind: $0.kind, name: $0.name, namespace: $0.namespace,
                    note: "not checked: the cluster does not exist yet")
            }
            return report
        }
        let localImageIDs = localImageIDs(rendered, target, req)
        let cluster = try await connect(rendered, target, req, progress: progress)
        // Where this cluster's DNS answers, for an egress policy: asked now, beside the read and the record, not after.
        let dns =
            rendered.model.spec.sections.egress == nil
            ? nil : Task { [client = cluster.client] in await ClusterDNSReader(client: client).read() }
        // 3 … 9 with the lock held (a dry run holds none); 10. unlock, on every path.
        let (report, objects) = try await DeploymentLock.held(cluster.lock) {
            // A first start's new volumes, made now (the Lease is held) and named on the node: provisioned while what
            // follows is read, written and applied.
            let claimsMade =
                cluster.createdNamespace && req.wait && !req.dryRun && req.onlyKinds == nil
                ? ClaimBinding(ctx: ctx, client: cluster.client, namespace: namespace, progress: progress)
                    .ahead(rendered.manifest.objects) : nil
            // 3. read (the record's revisions beside it, in a namespace that was there)
            let recording =
                req.dryRun
                ? nil
                : RecordStep(
                    ctx: ctx, client: cluster.client, model: rendered.model, namespace: rendered.namespace,
                    connection: cluster.target.connection, req: req)
            let heads = cluster.createdNamespace ? nil : recording.map { r in Task { try await r.store.heads() } }
            // A namespace this run made holds no record: its first revision is written, by whoever the API server
            // says this is (asked as the namespace was made, beside the Lease's create and the files read here).
            let user =
                cluster.createdNamespace ? recording.map { r in cluster.writer ?? Task { await r.whoAmI() } } : nil
            let read = req.dryRun ? cluster : try await self.read(cluster, rendered, req)
            // The deployment's record: a stale directory is refused here, before anything is applied. What follows
            // the revision written (old ones pruned, the Namespace's note of the writer) goes on beside the apply.
            let begun = try await recording?.begin(
                existing: read.existing, heads: try await heads?.value ?? [], user: await user?.value, deferTail: true)
            // These files are this machine's now: a revision of the same files is the reader's own (`RecordGate`).
            // Beside the apply: the list is shared by this home's starts, written under a host lock.
            let ctx = self.ctx
            let remembered = begun.map { b in Task { await StartedRevisions(ctx).add(b.head.digest) } }
            do {
                let done = try await self.locked(
                    rendered, read, localImageIDs, req, dns: dns, claimsMade: claimsMade, progress: progress)
                await remembered?.value
                if let recording, let begun { await recording.end(begun, result: req.wait ? "started" : "applied") }
                return done
            } catch {
                await remembered?.value
                if let recording, let begun {
                    await recording.end(begun, result: "failed: " + Self.firstLine(error))
                }
                throw error
            }
        }
        if req.dryRun { return Self.plan(report, objects: objects) }
        if req.onlyKinds == nil { try await StartCommands(ctx: ctx, model: model).run(.post) }
        let what = req.onlyKinds.map { "updated \($0.sorted().joined(separator: ", ")) of" } ?? "started"
        let on =
            cluster.target.kindCluster.map { " on kind cluster \($0)" }
            ?? " (context \(cluster.target.connection.contextName))"
        progress.done("\(what) \(model.id) in namespace \(namespace)" + on)
        return report
    }

    /// The first line of an error, for the record's result.
    static func firstLine(_ error: Error) -> String {
        let text = (error as? SoError)?.message ?? String(describing: error)
        return String(text.split(separator: "\n", omittingEmptySubsequences: true).first ?? "")
    }

    /// Steps 3 (after the read) to 9, the lock held.
    func locked(
        _ rendered: Rendered, _ read: Connected, _ localImageIDs: Task<[(image: String, id: String)], Never>,
        _ req: StartRequest, dns: Task<ClusterDNS?, Never>? = nil, claimsMade: Task<[String], Never>? = nil,
        progress: ProgressReporter
    ) async throws -> (StartReport, [KubeObject]) {
        var o = try await open(rendered, read, imageIDs: await localImageIDs.value, req, dns: dns, progress: progress)
        o.steps.claimsMade = claimsMade
        defer { o.images?.cancel() }  // only an error leaves it running
        // 4. unchanged … 7. prune
        if let renewal = unchanged(o.rendered, o.cluster, o.objects, o.owned, req, report: o.report) {
            try await renew(&o, renewal, req, progress: progress)
        } else {
            try await change(&o, req, progress: progress)
        }
        // 8. load images: awaited whether or not a workload was applied (a failure is reported here); pods
        // that were waiting on one of them are made again.
        if let loaded = try await o.images?.value, !loaded.isEmpty {
            try await o.steps.restartPodsWaiting(on: loaded)
        }
        // 9. wait
        if req.wait && !req.dryRun {
            try await o.steps.wait(
                for: o.objects, timeout: req.timeout, existing: o.cluster.existing, confirmation: req.confirmation)
        }
        return (o.report, o.objects)
    }

    /// What a start has read under its lock, and what it will apply: one value the steps after step 3 read.
    struct Opened {
        var rendered: Rendered
        var cluster: Connected
        /// The images being loaded into kind (nil: none, or a dry run).
        var images: Task<[String], Error>?
        var steps: StartSteps
        /// What the deployment owns, as listed once (an existing namespace, the kinds it records).
        var owned: OwnedObjects?
        /// What start applies, its config revisions stamped from the live Secrets and ConfigMaps.
        var objects: [KubeObject]
        var report: StartReport
    }

    /// Step 3 and what follows it before step 4: render with what the cluster told, the images, what start
    /// applies (the values to be made made, once: a dry run names them), and what the deployment owns.
    func open(
        _ rendered: Rendered, _ cluster: Connected, imageIDs: [(image: String, id: String)], _ req: StartRequest,
        dns: Task<ClusterDNS?, Never>? = nil, progress: ProgressReporter
    ) async throws -> Opened {
        var rendered = rendered
        let (model, namespace) = (rendered.model, rendered.namespace)
        // The DNS policy allows where this cluster's DNS answers (its kube-dns endpoints), no wider.
        async let dnsRead = Self.clusterDNS(ahead: dns, model, cluster.client)
        // An Ingress names the cluster's default class when the spec names none, and its certificates are checked.
        let check = IngressCheck(client: cluster.client)
        let routed = rendered.manifest.objects.contains { $0.isKind(.ingress) }
        async let classesRead = routed ? check.classes() : nil
        async let tlsRead = routed ? check.tlsWarnings(model.spec, namespace: namespace, log: ctx.verbose) : []
        // The node that holds the path volumes, when this cluster tells it and the spec does not.
        let firstRender = rendered.manifest
        async let nodeRead = VolumeNodeFinder(client: cluster.client).find(
            model, firstRender, target: cluster.target)
        let (dns, classes, tlsWarnings) = await (dnsRead, classesRead, tlsRead)
        let volumeNode = try await nodeRead
        let defaultClass = model.spec.sections.ingressClass == nil ? classes?.defaultClass : nil
        if HostGatewayFinder.needed(model) || dns != nil || defaultClass != nil || volumeNode != nil {
            // Rendered again, once, with what the cluster told (step 1 held back its warnings when a gateway was needed).
            rendered.manifest = try RenderAction(ctx).render(
                model, hostGateway: rendered.hostGateway, clusterDNS: dns, ingressClass: defaultClass,
                volumeNode: volumeNode, warn: HostGatewayFinder.needed(model))
        }
        let installing = IngressInstaller.needed(model, rendered.manifest, req) ? Defaults.ingressClass : nil
        let classWarning = IngressCheck.classWarning(
            rendered.manifest.objects, classes: classes, installing: installing)
        for warning in tlsWarnings + (classWarning.map { [$0] } ?? []) { ctx.diagnostics.warn(warning) }
        let images = req.dryRun ? nil : loadImages(imageIDs, cluster.target, req, progress: progress)
        var report = StartReport(namespace: namespace)
        // What start applies, with the values stored so far and those to be made (named only, in a dry run).
        let base = try manifest(
            rendered, cluster, req, stored: cluster.storedSecrets, imageIDs: imageIDs, make: !req.dryRun,
            report: &report)
        let dryRun =
            !req.dryRun
            ? nil
            : StartSteps.DryRun(
                diff: req.diff, namespaceIsNew: cluster.existing == nil,
                madeNow: report.generatedSecrets)
        let steps = StartSteps(
            ctx: ctx, client: cluster.client, model: model, namespace: namespace, progress: progress,
            bindClaimsAhead: req.wait && !req.dryRun,
            uptime: KubectlUptime(processes: ctx.processes, kubectlFlags: cluster.target.kubectlFlags), dryRun: dryRun)
        // What the deployment owns (one list per kind the Namespace records): the unchanged-test, apply and prune.
        var owned: OwnedObjects?
        if let existing = cluster.existing, req.onlyKinds == nil {
            owned = try await steps.listOwned(keep: base, kinds: StartAction.pruneKinds(existing))
        }
        // The revisions of its Secrets and ConfigMaps (with --only, as they run), for the pods that read them.
        var liveConfig: [String: JSON] = owned?.live ?? [:]
        if owned == nil, cluster.existing != nil {
            liveConfig = try await ConfigRevisions.live(cluster.client, namespace: namespace, deployment: model.id)
        }
        return Opened(
            rendered: rendered, cluster: cluster, images: images, steps: steps, owned: owned,
            objects: ConfigRevisions.stamp(base, live: liveConfig), report: report)
    }

    /// Where the cluster's DNS answers, for a spec with `egress:` (nil without): as asked ahead (`dns`), else asked now.
    static func clusterDNS(ahead dns: Task<ClusterDNS?, Never>?, _ model: DeploymentModel, _ client: ClusterClient)
        async -> ClusterDNS?
    {
        if let dns { return await dns.value }
        return model.spec.sections.egress == nil ? nil : await ClusterDNSReader(client: client).read()
    }

    /// Step 3's way: the Namespace's lifecycle annotations renewed, every object counted as unchanged.
    func renew(_ o: inout Opened, _ renewal: Renewal, _ req: StartRequest, progress: ProgressReporter) async throws {
        // One merge patch of those annotations alone: a run racing this one may have applied other fields.
        if case .renew(let annotations) = renewal, !req.dryRun {
            try await o.cluster.client.annotate(.namespace, name: o.rendered.namespace, namespace: nil, annotations)
        }
        if let owned = o.owned { o.steps.warnKeptVolumes(owned) }
        // The Namespace counts as unchanged: only its lifecycle annotations were renewed.
        o.report.unchanged = o.objects.filter { !$0.isKind(.job) }.map(\.reference)
        o.report.skipped = o.objects.filter { $0.isKind(.job) }.map(\.reference)
        progress.phase(
            "unchanged",
            "\(o.report.unchanged.count) \(English.plural("object", o.report.unchanged.count)) already as rendered")
    }

    /// Steps 5 to 7, under the lock (a dry run holds none): the values to be made were made in step 3.
    func change(_ o: inout Opened, _ req: StartRequest, progress: ProgressReporter) async throws {
        let (model, cluster) = (o.rendered.model, o.cluster)
        // 5. ingress
        let images = o.images
        if IngressInstaller.needed(model, o.rendered.manifest, req) && !req.dryRun {
            // Its image may be one of the images being loaded (a spec caddy-ingress-image this host has).
            _ = try await images?.value
            // One controller per cluster: concurrent runs install it one at a time (the cluster's lock).
            let clusterLock = DeploymentLock.cluster(ctx: ctx, client: cluster.client, duration: req.timeout)
            _ = try await clusterLock.holding(waiting: req.timeout, progress: progress) {
                try await IngressInstaller(ctx: ctx, client: cluster.client)
                    .ensure(
                        image: model.spec.sections.caddyIngressImage, acmeEmail: model.spec.acmeEmail,
                        timeout: req.timeout, progress: progress)
            }
        }
        // 6. apply
        if let owned = o.owned { o.steps.warnKeptVolumes(owned) }
        try await o.steps.apply(
            o.objects, existing: cluster.existing, owned: o.owned, onlyKinds: req.onlyKinds, report: &o.report,
            beforeWorkloads: { _ = try await images?.value })
        // 7. prune
        try await o.steps.prune(o.owned?.pruneCandidates ?? [], report: &o.report)
        // Started again after 'so cleanup --idle' stopped it: no longer idle-stopped.
        if let existing = cluster.existing, existing.annotations[DeploymentNames.Annotation.idleStopped] != nil {
            let patch = #"{"metadata":{"annotations":{"\#(DeploymentNames.Annotation.idleStopped)":null}}}"#
            _ = try await cluster.client.patch(
                .namespace, name: o.rendered.namespace, namespace: nil, mergePatch: Data(patch.utf8))
        }
    }

    // MARK: a dry run's plan

    /// The plan of a dry run, from its report: what start would apply (as the server judged it, in the
    /// manifest's order), what it would leave as it is, then what it would prune.
    static func plan(_ report: StartReport, objects: [KubeObject]) -> StartReport {
        var out = report
        let judged = Dictionary(report.plan.filter { $0.action != .delete }.map { ($0.kind + "/" + $0.name, $0) }) {
            a, _ in a
        }
        let untouched = Set(report.unchanged + report.skipped)
        out.plan = objects.compactMap { o in
            if let change = judged[o.kind + "/" + o.name] { return change }
            guard untouched.contains(o.reference) else { return nil }
            let namespaced = o.namespace != nil && !o.isKind(.namespace)
            return PlannedChange(
                action: .unchanged, kind: o.kind, name: o.name, namespace: namespaced ? o.namespace : nil)
        }
        out.plan += report.plan.filter { $0.action == .delete }
        return out
    }

    // MARK: 4. nothing to change

    /// How a start of a running deployment that would change nothing renews the Namespace, or nil when it
    /// would change something. It would change nothing when every object is already as rendered (start's
    /// unchanged-test, `KubeObject.isUnchanged`), every Job exists, nothing is to be pruned, no value is to
    /// be made and no ingress controller to be checked; the Namespace's lifecycle annotations (times and
    /// host, which no other run's work depends on) may differ. It is judged under the lock, on what
    /// step 3 read: no other writer runs meanwhile.
    func unchanged(
        _ rendered: Rendered, _ cluster: Connected, _ objects: [KubeObject], _ owned: OwnedObjects?,
        _ req: StartRequest,
        report: StartReport
    ) -> Renewal? {
        guard let existing = cluster.existing, let owned, req.onlyKinds == nil,
            !IngressInstaller.needed(rendered.model, rendered.manifest, req),
            report.generatedSecrets.isEmpty, let ns = objects.first(where: { $0.isKind(.namespace) }),
            let renewal = Self.lifecycleRenewal(ns, live: existing)
        else { return nil }
        let rest = objects.filter { !$0.isKind(.namespace) }
        guard owned.pruneCandidates.isEmpty,
            rest.allSatisfy({ o in
                o.isKind(.job)
                    ? owned.jobs.contains(o.name) : owned.holds(o, namespace: ns.name)
            })
        else { return nil }
        return renewal
    }

    static let lifecycleKeys: Set<String> = [
        DeploymentNames.Annotation.startedAt, DeploymentNames.Annotation.host, DeploymentNames.Annotation.expiresAt,
    ]

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
        guard liveKeys.allSatisfy({ k in ns.annotations.contains { $0.0 == k } }), asLive.isUnchanged(in: live) else {
            return nil
        }
        return .renew(
            ns.annotations.filter { lifecycleKeys.contains($0.0) } + [
                (KubeObject.appliedHashAnnotation, ns.appliedHash)
            ])
    }

    // MARK: 1. render

    struct Rendered: Sendable {
        var model: DeploymentModel
        var manifest: Manifest
        /// The address compose's host-gateway stands for, when start found one.
        var hostGateway: String? = nil
        var namespace: String { Renderer.namespace(of: model) }
    }

    /// The objects. extra_hosts host-gateway without the spec's `host-gateway:`, and an egress policy's DNS,
    /// depend on the cluster: this render checks (its warnings held back when a gateway is needed), and the
    /// read step renders once more with what the cluster told.
    func render(_ req: StartRequest) throws -> Rendered {
        let model = try RenderAction(ctx).model(req.directory)
        return Rendered(
            model: model, manifest: try RenderAction(ctx).render(model, warn: !HostGatewayFinder.needed(model)))
    }

    // MARK: 2. connect and lock

    struct Connected: Sendable {
        var target: ClusterTarget
        var client: ClusterClient
        /// The namespace as it stood (its owner checked), or nil when this run created it (read in step 3).
        var existing: JSON? = nil
        /// The generated-secrets Secret as stored, when the deployment has one (read in step 3).
        var storedSecrets: JSON? = nil
        /// The deployment's lock, taken (nil in a dry run).
        var lock: DeploymentLock? = nil
        /// Whether this run created the namespace (nothing in it to read).
        var createdNamespace = false
        /// Who this run is (`RecordStep.whoAmI`), asked as this run made the namespace, beside the Lease's create:
        /// the first revision's writer. Nil when it made none.
        var writer: Task<String, Never>? = nil
    }

    /// A task started from a callback, read once the call that made the callback has returned.
    final class AskedAhead<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var started: Task<T, Never>?
        var task: Task<T, Never>? { lock.withLock { started } }
        func start(_ body: @escaping @Sendable () async -> T) { lock.withLock { started = Task(operation: body) } }
    }

    /// The cluster for the deployment; the deployment's kind cluster is created when none runs (with cluster
    /// management on), and the host gateway's address when the deployment needs one (rendered with it once
    /// connected). A dry run creates nothing: nil when start would create the cluster (said so).
    func clusterTarget(_ rendered: inout Rendered, _ req: StartRequest, progress: ProgressReporter) async throws
        -> ClusterTarget?
    {
        progress.phase("connecting", "to the cluster")
        let targets = ClusterTargets(ctx: ctx)
        let found =
            req.dryRun
            ? try await targets.find(rendered.model, req.cluster, allowCreate: true)
            : try await targets.resolve(rendered.model, req.cluster, allowCreate: true)
        if HostGatewayFinder.needed(rendered.model) {
            rendered.hostGateway = found?.kindCluster == nil ? nil : await HostGatewayFinder(ctx: ctx).kindGateway()
        }
        if found == nil {
            let wanted = rendered.model.spec.kindClusterName ?? rendered.model.identity.clusterID
            ctx.say(
                "would create kind cluster '\(wanted)' from \(Path.join(rendered.model.directory, "kind-config.yml"))")
        }
        return found
    }

    /// The deployment's lock taken, and its namespace made when there is none: the Lease's create is the
    /// first request, and a create refused for want of the namespace creates it (only what never changes:
    /// the rest comes with its apply). A lock another run holds is waited for up to --timeout, once the
    /// namespace is known to be this deployment's. A dry run takes no lock and reads the Namespace and the
    /// stored values. A kind context from the user's kubeconfig that does not answer is stale: the cluster
    /// is found again through kind's CLI (and created when none runs).
    func connect(_ rendered: Rendered, _ target: ClusterTarget, _ req: StartRequest, progress: ProgressReporter)
        async throws -> Connected
    {
        let (model, namespace) = (rendered.model, rendered.namespace)
        // Marked as made by so: only such a namespace is deleted whole without looking in it (NamespaceContents).
        let bare = KubeObject(
            .namespace, name: namespace,
            annotations: [
                (DeploymentNames.directoryAnnotation, model.directory),
                (DeploymentNames.Annotation.madeBy, DeploymentNames.Annotation.madeBySo),
            ])
        func attempt(_ target: ClusterTarget) async throws -> Connected {
            let client = try ctx.connect(target.connection)
            var cluster = Connected(target: target, client: client)
            if req.dryRun {
                return try await read(cluster, rendered, req)
            }
            let lock = DeploymentLock(
                ctx: ctx, client: client, namespace: namespace, model: model, duration: req.timeout)
            // A first start's next question (who it is, for its record's first revision) goes beside the Lease.
            let writer = AskedAhead<String>()
            let connection = target.connection
            let (refusal, created) = try await firstTry(
                lock, creating: bare, req, progress: progress,
                namespaceMade: { writer.start { await RecordStep.whoAmI(client, connection: connection) } })
            if let refusal {
                // Another run holds it: waited for only when the namespace is this deployment's.
                if let ns = try await client.get(.namespace, name: namespace, namespace: nil) {
                    try checkOwnership(ns, namespace: namespace, model: model)
                }
                try await lock.wait(after: refusal, waiting: req.timeout, progress: progress)
            }
            // `created`: this run made the namespace and no other run's Lease was ever met in it. A run starting
            // at the same moment can take the Lease between this run's two creates, and then write the record's
            // first revision and the generated secrets, which this run must read (2026-11-28: it read neither,
            // and its record's write was refused as revision 1 taken; first when this run waited for the Lease,
            // then when the other released it between this run's refused create and its read of the Lease).
            (cluster.lock, cluster.createdNamespace, cluster.writer) = (lock, created, writer.task)
            return cluster
        }
        do {
            return try await attempt(target)
        } catch let e as SoError where target.fromUserKubeconfig && e.exitCode == SoError.exitUnreachable {
            // A stale kind-<cluster> entry in the user's kubeconfig: ask kind itself.
            guard let kind = target.kindCluster else { throw e }
            ctx.verbose("the kubeconfig's context kind-\(kind) did not answer (\(e.message)); asking kind")
            let targets = ClusterTargets(ctx: ctx)
            if let clusters = try await targets.installedKindClusters(),
                let found = clusters.contains(kind) ? kind : clusters.first
            {
                return try await attempt(try await targets.kindCLITarget(found))
            }
            guard req.cluster.performClusterManagement, !req.dryRun else { throw e }
            return try await attempt(try await targets.createKind(model))
        }
    }

    /// The lock's first try (`DeploymentLock.tryAcquire`). A namespace still being deleted (by a `so down` or
    /// a `stop --delete-namespace` just before) refuses the Lease: it is waited for until it is gone, up to
    /// --timeout, looked at after 0.25 s, then twice as long each time up to 1 s, and made anew.
    func firstTry(
        _ lock: DeploymentLock, creating bare: KubeObject, _ req: StartRequest, progress: ProgressReporter,
        namespaceMade: (@Sendable () -> Void)? = nil
    ) async throws -> (refusal: SoError?, createdNamespace: Bool) {
        let deadline = ctx.clock.now().addingTimeInterval(req.timeout)
        var pause = 0.25
        var said = false
        while true {
            do { return try await lock.tryAcquire(creating: bare, namespaceMade: namespaceMade) } catch {
                // Gone since it was seen being deleted: the next try makes it.
                let ns = try await lock.client.get(.namespace, name: bare.name, namespace: nil)
                let going = ns.map { $0.at("status", "phase")?.string == "Terminating" } ?? said
                guard going, ctx.clock.now() < deadline else { throw error }
                if !said { progress.phase("waiting", "namespace \(bare.name) is being deleted") }
                said = true
                try await ctx.clock.sleep(seconds: pause)
                pause = min(pause * 2, 1)
            }
        }
    }

    /// Step 3's first round trip: the Namespace (its owner checked) and the stored secret values, read at
    /// once (a dry run's connect reads them); nothing when this run created the namespace.
    func read(_ cluster: Connected, _ rendered: Rendered, _ req: StartRequest) async throws -> Connected {
        guard !cluster.createdNamespace else { return cluster }
        let (model, namespace, client) = (rendered.model, rendered.namespace, cluster.client)
        let secretName =
            SecretSources(ctx: ctx, model: model).hasGenerated && (req.onlyKinds?.contains("Secret") ?? true)
            ? DeploymentNames.generatedSecrets(model.id) : nil
        async let current = client.get(.namespace, name: namespace, namespace: nil)
        async let stored = secretName == nil ? nil : client.get(.secret, name: secretName ?? "", namespace: namespace)
        var read = cluster
        guard let existing = try await current else {
            if req.dryRun { return read }
            throw SoError("namespace \(namespace) was deleted while this start began", hint: "run the start again")
        }
        try checkOwnership(existing, namespace: namespace, model: model)
        (read.existing, read.storedSecrets) = (existing, try await stored)
        return read
    }

    /// A namespace annotated for another deployment directory is never taken over; one being deleted
    /// cannot take new objects.
    func checkOwnership(_ ns: JSON, namespace: String, model: DeploymentModel) throws {
        if let owner = ns.annotations[DeploymentNames.directoryAnnotation], owner != model.directory,
            !DeploymentNames.sameDeployment(ns, model.id)
        {
            throw SoError(
                "namespace \(namespace) belongs to another deployment directory: \(owner)",
                hint: "stop that deployment first, or set 'namespace:' in this spec to another name")
        }
        if ns.at("metadata", "deletionTimestamp")?.string != nil {
            throw SoError(
                "namespace \(namespace) is being deleted",
                hint: "wait until it is gone ('kubectl get namespace \(namespace)'), then start again")
        }
    }

    /// The IDs of the local images on this host, read beside the first round trip (on kind, with cluster
    /// management on). A spec `caddy-ingress-image` this host has is loaded too, when the controller is installed,
    /// and a spec `wait-image` the pods use (hosts that cannot pull the images `so` adds).
    func localImageIDs(_ rendered: Rendered, _ target: ClusterTarget, _ req: StartRequest) -> Task<
        [(image: String, id: String)], Never
    > {
        guard target.kindCluster != nil, req.cluster.performClusterManagement else { return Task { [] } }
        let sections = rendered.model.spec.sections
        let ingress = IngressInstaller.needed(rendered.model, rendered.manifest, req) ? sections.caddyIngressImage : nil
        let wait = sections.waitImage.flatMap { image in
            rendered.manifest.objects.contains { ImageLoader.images(in: $0.value).contains(image) } ? image : nil
        }
        let also = [ingress, wait].compactMap { $0 }
        return Task { [ctx] in
            await ImageLoader(ctx: ctx).ids(manifest: rendered.manifest, model: rendered.model, also: also)
        }
    }

    /// Local images are compared with the kind node's (and loaded) beside the API requests; the workloads
    /// wait for them.
    func loadImages(
        _ ids: [(image: String, id: String)], _ target: ClusterTarget, _ req: StartRequest, progress: ProgressReporter
    ) -> Task<[String], Error>? {
        guard let kind = target.kindCluster, req.cluster.performClusterManagement, !ids.isEmpty else { return nil }
        return Task { [ctx] in try await ImageLoader(ctx: ctx).load(ids, cluster: kind, progress: progress) }
    }

    // MARK: what start applies

    /// The objects this start applies (`StartManifest`) with `stored` values, the Deployments that run local
    /// images stamped with their IDs, the kinds `--only` names among them.
    func manifest(
        _ rendered: Rendered, _ cluster: Connected, _ req: StartRequest, stored: JSON?,
        imageIDs: [(image: String, id: String)],
        make: Bool = true, report: inout StartReport
    ) throws -> [KubeObject] {
        let built = try StartManifest(ctx: ctx, model: rendered.model)
            .objects(
                rendered.manifest, stored: stored, ttl: req.ttl, withSecrets: req.onlyKinds?.contains("Secret") ?? true,
                make: make, withholdSecretEnv: req.withholdSecretEnv)
        report.generatedSecrets = built.madeNow
        let objects = ImageLoader.stamp(built.objects, ids: imageIDs)
        // A namespace this run created gets its labels and annotations whatever else is applied.
        guard let only = req.onlyKinds else { return objects }
        return objects.filter { only.contains($0.kind) || (cluster.existing == nil && $0.isKind(.namespace)) }
    }

    /// The kinds a start applies, recorded on the namespace: the next start lists only these (and the
    /// current ones) to prune, instead of every prunable kind.
    static func recordedKinds(_ objects: [KubeObject]) -> String {
        Set(objects.map(\.kind) + ["Secret"]).intersection(prunable).sorted().joined(separator: ",")
    }

    /// What to list for pruning in an existing namespace: the kinds recorded by the last start (all
    /// prunable kinds when it did not record them).
    static func pruneKinds(_ namespace: JSON) -> [String] {
        guard let recorded = namespace.annotations[DeploymentNames.Annotation.kinds] else { return prunable }
        let kinds = Set(recorded.split(separator: ",").map(String.init))
        return prunable.filter { kinds.contains($0) }
    }

    /// This deployment's objects as listed by label (`StartSteps.listOwned`), for `start --dry-run`'s plan.
    func listOwned(
        _ client: ClusterClient, namespace: String, model: DeploymentModel, keep: [KubeObject],
        kinds: [String] = StartAction.prunable
    ) async throws -> OwnedObjects {
        let steps = StartSteps(
            ctx: ctx, client: client, model: model, namespace: namespace,
            progress: ProgressReporter(ctx: ctx, mode: .plain))
        let owned = try await steps.listOwned(keep: keep, kinds: kinds)
        steps.warnKeptVolumes(owned)
        return owned
    }
}
