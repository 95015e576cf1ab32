import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// Steps of `start` (list, apply, prune, wait), the apply and prune while the deployment's lock is held.
struct StartSteps: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let model: DeploymentModel
    let namespace: String
    let progress: ProgressReporter
    /// Bind new claims before the workloads go out (`ClaimBinding`): when start waits anyway. `--no-wait`
    /// leaves as soon as everything is applied.
    var bindClaimsAhead = false
    /// The claims a first start made as it took its Lease, the node named (`ClaimBinding.ahead`): waited for with
    /// those its batch names.
    var claimsMade: Task<[String], Never>? = nil
    /// How the wait asks a young container its age (`KubectlUptime`, through the cluster's kubectl flags);
    /// nil: the kubelet's round alone believes it.
    var uptime: ContainerUptime? = nil
    /// `start --dry-run`: the same steps with their writes in dry-run mode. An apply is a server-side dry run
    /// (`dryRun=All`), a delete is only named; what each would do goes into the report's plan.
    var dryRun: DryRun?

    struct DryRun: Sendable {
        /// `--diff`: the fields each configured object would change.
        var diff = false
        /// The namespace does not exist yet: the API server judges nothing in it (not even a dry run).
        var namespaceIsNew = false
        /// The keys of the generated-secrets Secret whose values start would make now (named, never shown).
        var madeNow: [String] = []
    }

    // MARK: 6. apply

    /// Applies `objects` (in the manifest's order) phase by phase: the stages of one `Stage.Phase` go out
    /// together, with bounded parallelism. `owned`: what the deployment owns, as listed in an existing
    /// namespace (`listOwned`): which Jobs exist (never re-run) and which objects are already as rendered
    /// (not sent again). The Namespace goes with the first batch (its apply sets the labels pods are
    /// admitted by), unless it is as read a moment ago.
    func apply(
        _ objects: [KubeObject], existing: JSON?, owned: OwnedObjects?, onlyKinds: Set<String>?,
        report: inout StartReport,
        beforeWorkloads: () async throws -> Void
    ) async throws {
        // The Namespace exists already (the lock step made sure).
        let split = namespaces(objects, existing: existing, onlyKinds: onlyKinds, report: &report)
        var namespaceObjects = split.namespaces
        let renewed = split.renewed
        let rest = objects.filter { !$0.isKind(.namespace) }
        var workloadsReady = false
        var newClaims: [String] = []
        var naming: ClaimBinding.Naming?
        let together =
            dryRun == nil && onlyKinds == nil && Self.inputsWithPolicies(rest, namespaceIsNew: existing == nil)
        for phase in Stage.Phase.allCases {
            var batch = rest.filter { Self.phase(of: $0, together: together) == phase }
            if let owned { try await dropUnchanged(&batch, owned: owned, report: &report) }
            if !namespaceObjects.isEmpty && (!batch.isEmpty || phase == Stage.Phase.allCases.last) {
                batch = namespaceObjects + batch
                namespaceObjects = []
            }
            guard !batch.isEmpty else { continue }
            if bindClaimsAhead && dryRun == nil && naming == nil
                && (claimsMade != nil || batch.contains(where: { $0.isKind(.persistentVolumeClaim) }))
            {
                naming = ClaimBinding(ctx: ctx, client: client, namespace: namespace, progress: progress).naming()
            }
            var binding: ClaimBinding.Started?
            if !workloadsReady && dryRun == nil && batch.contains(where: { $0.isKind(.deployment) || $0.isKind(.job) })
            {
                // New volumes are provisioned while the stopped pods end and the images load.
                for made in await claimsMade?.value ?? [] where !newClaims.contains(made) { newClaims.append(made) }
                binding = await naming?.started(newClaims)
                if existing != nil { try await waitForEndingPods() }
                try await beforeWorkloads()
                workloadsReady = true
            }
            if let binding {
                // What mounts none of them goes out at once: its pods start while the volumes are made (and the
                // claims are looked at meanwhile: often bound by now).
                async let bound: Void = binding.waitBound()
                let (early, late) = ClaimBinding.partition(batch, notMounting: binding.claims)
                if !early.isEmpty && !late.isEmpty {
                    try await applyBatch(early, existing: existing, owned: owned, renewed: renewed, report: &report)
                    batch = late
                }
                try await bound
            }
            newClaims += try await applyBatch(
                batch, existing: existing, owned: owned, renewed: renewed, report: &report, naming: naming)
        }
        if !report.unchanged.isEmpty {
            progress.phase(
                "unchanged",
                "\(report.unchanged.count) \(English.plural("object", report.unchanged.count)) already as rendered")
        }
    }

    /// The phase `o` goes out in: its stage's, but the pods' inputs go with the policies when `together`
    /// (`inputsWithPolicies`).
    static func phase(of o: KubeObject, together: Bool) -> Stage.Phase {
        let phase = Stage.of(kind: o.kind).phase
        return together && phase == .podInputs ? .policies : phase
    }

    /// Whether the pods' inputs (Secrets, ConfigMaps, claims, Services) may go out in one batch with the policies (one
    /// round trip before the workloads, where there were two; issue 66): in a namespace this start made (nothing else
    /// in it counts against its quota), with no PersistentVolume (a claim bound to one by name comes after it), and
    /// with every claim inside what the rendered quotas allow (`claimsFit`), so that nothing the quota would refuse is
    /// admitted because it reached the API server before the quota did. The workloads still go after this batch has
    /// answered: no pod exists before its NetworkPolicies and the LimitRange, as before. Kubernetes needs a pod's
    /// ConfigMaps, Secrets and claims when the pod starts, not before its Deployment is made; they are made before it
    /// all the same.
    static func inputsWithPolicies(_ objects: [KubeObject], namespaceIsNew: Bool) -> Bool {
        namespaceIsNew && !objects.contains { $0.isKind(.persistentVolume) } && claimsFit(objects)
    }

    /// Whether a first start's claims may be made before its policies, as it takes its Lease (`ClaimBinding.ahead`):
    /// where they could go with the policies (`inputsWithPolicies`), and no LimitRange judges claims (only
    /// `Container` and `Pod` limits).
    static func claimsAhead(_ objects: [KubeObject]) -> Bool {
        let judgesClaims = objects.contains { o in
            guard o.isKind(.limitRange), case .list(let limits)? = o.spec?.field("limits") else { return false }
            return limits.contains { ![.string("Container"), .string("Pod")].contains($0.field("type")) }
        }
        return !judgesClaims && inputsWithPolicies(objects, namespaceIsNew: true)
    }

    /// Whether the claims among `objects` fit every ResourceQuota among them, as the quota's admission would judge
    /// them in an empty namespace: `requests.storage` against the claims' requests summed. A quota that counts anything
    /// else a pod's input is (claims by number or storage class, Services, Secrets, ConfigMaps, `count/…`) is not
    /// judged here: false, and the inputs go after it.
    static func claimsFit(_ objects: [KubeObject]) -> Bool {
        func text(_ v: YValue?) -> String? {
            switch v {
            case .string(let s)?: return s
            case .int(let i)?: return String(i)
            default: return nil
            }
        }
        let claimed = objects.filter { $0.isKind(.persistentVolumeClaim) }.reduce(0.0) { sum, c in
            sum
                + Quantity.value(
                    text(c.spec?.field("resources")?.field("requests")?.field("storage")) ?? "", cpu: false)
        }
        for q in objects where q.isKind(.resourceQuota) {
            guard case .map(let hard)? = q.spec?.field("hard") else { return false }
            // A quota with a scope may judge claims by what its scope says: not judged here.
            if q.spec?.field("scopes") != nil || q.spec?.field("scopeSelector") != nil { return false }
            for (key, value) in hard {
                if key == "requests.storage" {
                    guard let limit = text(value), Quantity.value(limit, cpu: false) >= claimed else { return false }
                } else if !["pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"]
                    .contains(key)
                {
                    return false
                }
            }
        }
        return true
    }

    /// One batch applied, its progress shown and its results counted; the new claims in it that `naming` named on
    /// the node.
    @discardableResult
    func applyBatch(
        _ batch: [KubeObject], existing: JSON?, owned: OwnedObjects?, renewed: Set<String>, report: inout StartReport,
        naming: ClaimBinding.Naming? = nil
    ) async throws -> [String] {
        let started = ctx.clock.now()
        let summary = Self.summary(batch)
        progress.phase("applying", summary)
        let results = try await applyAll(
            batch, readJobs: existing != nil && owned == nil, owned: owned, existing: existing, naming: naming
        ) { done in
            progress.live(
                "applied \(done)/\(batch.count): \(summary)", elapsed: ctx.clock.now().timeIntervalSince(started))
        }
        if dryRun == nil, let existing, let ns = batch.first(where: { $0.isKind(.namespace) }) {
            try await dropExpiry(ns, live: existing)
        }
        report.applied += results.applied.filter { !renewed.contains($0) }
        report.unchanged += results.applied.filter { renewed.contains($0) }
        report.skipped += results.skipped
        report.plan += results.plan
        return results.named
    }

    /// A start right after a stop (by hand, or `so cleanup --idle`) in a namespace with a quota: the stopped pods
    /// count against the quota until they end, so the new ones would be refused (and the ReplicaSet retry later,
    /// with backoff). They end first: one list when none is ending; at most their grace period otherwise.
    func waitForEndingPods(atMost: Double = 60) async throws {
        guard model.spec.sections.quota != nil else { return }
        let started = ctx.clock.now()
        var said = false
        while ctx.clock.now().timeIntervalSince(started) < atMost {
            let ending = try await client.list(
                .pod, namespace: namespace, labelSelector: DeploymentNames.selector(model.id)
            ).filter { $0.at("metadata", "deletionTimestamp") != nil }
            guard !ending.isEmpty else { return }
            if !said {
                progress.phase(
                    "waiting",
                    "for \(ending.count) stopped \(English.plural("pod", ending.count)) to end (they count against the quota)"
                )
                said = true
            }
            try await ctx.clock.sleep(seconds: 0.2)
        }
    }

    /// The rendered Namespace to apply (in `namespaces`), unless only its lifecycle annotations differ from
    /// `existing`: then it is applied with the first batch and counted as unchanged (`renewed`), or, with nothing
    /// to renew or in a dry run, not sent at all.
    func namespaces(
        _ objects: [KubeObject], existing: JSON?, onlyKinds: Set<String>?, report: inout StartReport
    ) -> (namespaces: [KubeObject], renewed: Set<String>) {
        var renewed: Set<String> = []
        var namespaceObjects = objects.filter { $0.isKind(.namespace) }
        guard let existing, onlyKinds == nil else { return (namespaceObjects, renewed) }
        var unchanged: [String] = []
        namespaceObjects.removeAll { ns in
            // Only its lifecycle annotations differ (a new started-at): applied with the first batch, and
            // counted as unchanged (a dry run sends nothing).
            guard let renewal = StartAction.lifecycleRenewal(ns, live: existing) else { return false }
            if case .renew = renewal, dryRun == nil {
                renewed.insert(ns.reference)
                return false
            }
            unchanged.append(ns.reference)
            return true
        }
        report.unchanged += unchanged
        return (namespaceObjects, renewed)
    }

    /// Takes out of `batch` the Jobs that exist (never re-run) and the objects already as rendered (not sent
    /// again); replaces the Services that switch between headless and a cluster IP (in a dry run: names them).
    func dropUnchanged(_ batch: inout [KubeObject], owned: OwnedObjects, report: inout StartReport) async throws {
        var skipped: [String] = []
        var unchanged: [String] = []
        batch.removeAll { o in
            if o.isKind(.job) {
                if owned.jobs.contains(o.name) {
                    skipped.append(o.reference)
                    return true
                }
            } else if owned.holds(o, namespace: namespace) {
                unchanged.append(o.reference)
                return true
            }
            return false
        }
        report.skipped += skipped
        report.unchanged += unchanged
        let replaced = try await replaceServicesThatSwitchHeadless(batch, owned: owned)
        guard dryRun != nil else { return }
        // The server would refuse even a dry run of the switch: named, not judged.
        batch.removeAll { o in o.isKind(.service) && replaced.contains(o.name) }
        report.applied += replaced.map { "Service \(namespace)/\($0)" }
        report.plan += replaced.map {
            PlannedChange(
                action: .configure, kind: "Service", name: $0, namespace: namespace,
                note: "replaced: it switches between headless and a cluster IP")
        }
    }

    /// "2 ConfigMaps, 1 Service": what a batch holds, kinds in their order.
    static func summary(_ batch: [KubeObject]) -> String {
        let kinds = batch.map(\.kind).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return kinds.map { k in
            let n = batch.filter { $0.kind == k }.count
            return "\(n) \(English.plural(k, n))"
        }.joined(separator: ", ")
    }

    /// An `expires-at` the rendered Namespace no longer has (the ttl was taken away) is removed by name: a start
    /// that renewed it with a merge patch gave it to another field manager, so the server-side apply that
    /// leaves it out does not remove it, and `cleanup --expired` would remove the deployment.
    func dropExpiry(_ ns: KubeObject, live: JSON) async throws {
        let key = DeploymentNames.Annotation.expiresAt
        guard live.annotations[key] != nil, !ns.annotations.contains(where: { $0.0 == key }) else { return }
        let patch = JSON.object(["metadata": .object(["annotations": .object([key: .null])])])
        _ = try await client.patch(
            .namespace, name: ns.name, namespace: nil, mergePatch: Data(patch.yValue.compactJSON()))
    }

    /// A Service cannot switch between headless and a cluster IP in place (the API server refuses
    /// "spec.clusterIPs[0]: may not change once set"): one that must is deleted, then applied.
    /// Returns their names; a dry run deletes nothing.
    func replaceServicesThatSwitchHeadless(_ batch: [KubeObject], owned: OwnedObjects) async throws -> [String] {
        var replaced: [String] = []
        for o in batch where o.isKind(.service) {
            guard let live = owned.live["Service/" + o.name],
                (live.at("spec", "clusterIP")?.string == "None") != Self.isHeadless(o)
            else { continue }
            replaced.append(o.name)
            guard dryRun == nil else { continue }
            progress.phase("replacing", "\(o.reference): it switches between headless and a cluster IP")
            _ = try await client.delete(
                try ResourceType.of(o), name: o.name, namespace: o.namespace, propagation: .background)
        }
        return replaced
    }

    /// Applies a batch with bounded concurrency, each object stamped with its `appliedHash`; Jobs are
    /// created once and never re-run (`readJobs`: look each one up first, when the start does not know).
    /// A new claim is named on the node by `naming` as soon as the server answers it; their names are returned.
    /// In a dry run each is judged by the server instead (`judge`).
    func applyAll(
        _ batch: [KubeObject], readJobs: Bool, owned: OwnedObjects? = nil, existing: JSON? = nil,
        naming: ClaimBinding.Naming? = nil, onEach: (Int) -> Void = { _ in }
    ) async throws -> (applied: [String], skipped: [String], named: [String], plan: [PlannedChange]) {
        var applied: [String] = []
        var skipped: [String] = []
        var named: [String] = []
        var plan: [PlannedChange] = []
        try await withThrowingTaskGroup(of: (String, JSON?, PlannedChange?, String?).self) { group in
            var next = 0
            func launch() throws {
                let o = batch[next]
                next += 1
                group.addTask { [client, self] in
                    if o.isKind(.job), readJobs,
                        try await client.get(try ResourceType.of(o), name: o.name, namespace: o.namespace) != nil
                    {
                        return (o.reference, nil, nil, nil)
                    }
                    if let dryRun {
                        return (o.reference, .null, try await judge(o, dryRun, owned: owned, existing: existing), nil)
                    }
                    let answer = try await client.apply(o.stamped, fieldManager: "so", force: true)
                    if o.isKind(.persistentVolume),
                        let released = try await KeptVolume.release(
                            answer, client: client, namespace: namespace, log: ctx.verbose)
                    {
                        return (o.reference, released, nil, nil)
                    }
                    guard let naming, o.isKind(.persistentVolumeClaim) else { return (o.reference, answer, nil, nil) }
                    return (o.reference, answer, nil, try await naming.name(answer))
                }
            }
            while next < min(StartAction.parallelRequests, batch.count) { try launch() }
            while let (ref, answer, planned, claim) = try await group.next() {
                if answer != nil { applied.append(ref) } else { skipped.append(ref) }
                if let claim { named.append(claim) }
                if let planned { plan.append(planned) }
                onEach(applied.count + skipped.count)
                if next < batch.count { try launch() }
            }
        }
        return (applied, skipped, named, plan)
    }

    /// What applying `o` would do, as the API server judges it with a server-side dry run: create or configure
    /// (with `--diff`, the fields that would change; a Secret's values never appear). In a namespace that does
    /// not exist yet the server judges nothing: it would be created, not checked.
    func judge(_ o: KubeObject, _ dry: DryRun, owned: OwnedObjects?, existing: JSON?) async throws -> PlannedChange {
        let namespaced = o.namespace != nil && !o.isKind(.namespace)
        var notes: [String] = []
        if namespaced && dry.namespaceIsNew { notes.append("not checked: its namespace is new") }
        if o.isKind(.secret), o.name == DeploymentNames.generatedSecrets(model.id), !dry.madeNow.isEmpty {
            notes.append("values generated at start: " + dry.madeNow.joined(separator: ", "))
        }
        var change = PlannedChange(
            action: .create, kind: o.kind, name: o.name, namespace: namespaced ? o.namespace : nil,
            note: notes.isEmpty ? nil : notes.joined(separator: "; "))
        if namespaced && dry.namespaceIsNew { return change }
        let live: JSON?
        if o.isKind(.namespace) {
            live = existing
        } else if let found = owned?.live[o.kind + "/" + o.name] {
            live = found
        } else {
            live = try await client.get(try ResourceType.of(o), name: o.name, namespace: namespaced ? o.namespace : nil)
        }
        let admitted = try await client.dryRunApply(o.stamped, fieldManager: "so")
        guard let live else { return change }
        change.action = .configure
        if dry.diff {
            // The applied hash changes with anything else: the fields say what.
            change.diff = ObjectDiff.lines(
                from: ObjectDiff.comparable(live), to: ObjectDiff.comparable(admitted), secret: o.isKind(.secret)
            )
            .filter { !$0.dropFirst(2).hasPrefix("metadata.annotations.\(KubeObject.appliedHashAnnotation):") }
        }
        return change
    }

    /// This deployment's objects of `kinds` (and of the kinds in `keep`), plus its volumes: one list per
    /// kind, all at once.
    func listOwned(keep: [KubeObject], kinds: [String] = StartAction.prunable) async throws -> OwnedObjects {
        let selector = DeploymentNames.ownedSelector(model.id)
        let types = try StartAction.prunable
            .filter { k in kinds.contains(k) || keep.contains { $0.kind == k } }
            .map { kind in
                try ResourceType.known.first { $0.kind == kind }.map { $0 }
                    ?? ResourceType.of(apiVersion: "v1", kind: kind)
            }
        let volumes = [ResourceType.persistentVolumeClaim, .persistentVolume]
        let all = types + volumes
        let listed = try await withThrowingTaskGroup(of: (Int, [JSON]).self) { group in
            var next = 0
            func launch() {
                let i = next
                let type = all[i]
                next += 1
                group.addTask { [client, namespace] in
                    (
                        i,
                        try await client.list(
                            type, namespace: type.namespaced ? namespace : nil, labelSelector: selector)
                    )
                }
            }
            while next < min(StartAction.parallelRequests, all.count) { launch() }
            var out = [[JSON]](repeating: [], count: all.count)
            while let (i, items) = try await group.next() {
                out[i] = items
                if next < all.count { launch() }
            }
            return out
        }
        var owned = OwnedObjects()
        for (type, items) in zip(all, listed) {
            let kind = type.kind
            for item in items {
                owned.live[kind + "/" + item.name] = item
                if type == .job { owned.jobs.insert(item.name) }
                if keep.contains(where: { $0.kind == kind && $0.name == item.name }) { continue }
                if volumes.contains(type) {
                    owned.keptVolumes.append("\(kind) \(item.name)")
                    continue
                }
                // Objects a controller made (EndpointSlices of our Services copy their labels) are not ours to prune.
                if !(item.at("metadata", "ownerReferences")?.array ?? []).isEmpty { continue }
                owned.pruneCandidates.append((type, item.name))
            }
        }
        return owned
    }

    /// Says which volumes left the deployment and are kept with their data.
    func warnKeptVolumes(_ owned: OwnedObjects) {
        for volume in owned.keptVolumes {
            ctx.diagnostics.warn(
                "\(volume) is no longer in the deployment; kept with its data",
                hint: "'so deployment --dir \(ShellWords.quote(model.directory)) stop --delete-volumes' removes it")
        }
    }

    // MARK: 7. prune

    /// Deletes what left the manifest; returns "Kind name" of each.
    /// Deletes what left the manifest, naming each in the report ("Kind name"); a dry run only plans the deletes.
    func prune(_ candidates: [(ResourceType, String)], report: inout StartReport) async throws {
        for (type, name) in candidates {
            if dryRun == nil {
                _ = try await client.delete(type, name: name, namespace: namespace, propagation: .background)
            } else {
                report.plan.append(
                    PlannedChange(
                        action: .delete, kind: type.kind, name: name, namespace: type.namespaced ? namespace : nil,
                        note: "no longer in the deployment"))
            }
            report.pruned.append("\(type.kind) \(name)")
        }
        if !report.pruned.isEmpty { progress.phase("pruned", report.pruned.joined(separator: ", ")) }
    }

    // MARK: 8. load images

    /// Pods that wait on an image just loaded into kind (an earlier start ran before it was built) would wait
    /// out kubelet's back-off, up to 5 minutes, before trying again: they are deleted, and their ReplicaSet or
    /// Job makes new ones at once.
    func restartPodsWaiting(on loaded: [String]) async throws {
        let reasons: Set<String> = ["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"]
        var restarted: [String] = []
        for pod in try await client.list(
            .pod, namespace: namespace, labelSelector: DeploymentNames.instanceSelector(model.id))
        {
            let statuses =
                (pod.at("status", "initContainerStatuses")?.array ?? [])
                + (pod.at("status", "containerStatuses")?.array ?? [])
            let waiting = statuses.contains { c in
                guard let reason = c.at("state", "waiting")?["reason"]?.string, reasons.contains(reason),
                    let image = c["image"]?.string
                else { return false }
                return loaded.contains { ImageReference.same($0, image) }
            }
            guard waiting else { continue }
            _ = try await client.delete(.pod, name: pod.name, namespace: namespace, propagation: .background)
            restarted.append(pod.name)
        }
        if !restarted.isEmpty {
            progress.phase(
                "restarting",
                "\(restarted.count) \(English.plural("pod", restarted.count)) waiting on a newly loaded image: "
                    + restarted.joined(separator: ", "))
        }
    }

    // MARK: 9. wait

    /// `existing`: the Namespace as this start read it (what the last start's wait believed); `confirmation`: a
    /// container the caller proves ready by itself meanwhile (a late kubelet nudged soon after).
    func wait(for objects: [KubeObject], timeout: Double, existing: JSON?, confirmation: ReadyConfirmation? = nil)
        async throws
    {
        progress.phase("waiting", "for Deployments to be available and Jobs to complete (timeout \(Int(timeout))s)")
        let believed = existing?.annotations[DeploymentNames.Annotation.believed] ?? ""
        try await Waiter(
            ctx: ctx, client: client, namespace: namespace, selector: DeploymentNames.instanceSelector(model.id),
            directory: model.directory,
            believedBefore: Set(believed.split(separator: ",").map(String.init)), uptime: uptime,
            confirmation: confirmation
        )
        .wait(for: objects, timeout: timeout, progress: progress)
    }

    /// A Service rendered with `clusterIP: None`.
    static func isHeadless(_ o: KubeObject) -> Bool {
        guard case .map(let spec)? = o.body.first(where: { $0.0 == "spec" })?.1 else { return false }
        return spec.contains { $0.0 == "clusterIP" && $0.1 == .string("None") }
    }
}
