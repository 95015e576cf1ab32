import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// `so up STACK`: deploy init + create + start in one step, into `$SO_HOME/deployments/NAME` with the
/// namespace NAME. An existing NAME is started again as it is.
public struct UpAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    static let reservedNamespaces: Set<String> = [
        "default", "kube-system", "kube-public", "kube-node-lease", "caddy-system", "local-path-storage",
    ]

    public func run(_ req: UpRequest) async throws -> UpResult {
        let name =
            req.name
            ?? "\(NameRules.dnsLabel(Path.basename(req.stack)).prefix(40))-\(ctx.entropy.bytes(2).map { String(format: "%02x", $0) }.joined())"
        try NameRules.checkWorkspaceName(name)
        if Self.reservedNamespaces.contains(name) || name.hasPrefix("kube-") {
            throw SoError.usage("name '\(name)' is a system namespace", hint: "choose another --name")
        }
        let dir = try ctx.namedDeployment(name)
        // The stack, resolved once for the plan, the git identity, init and create.
        let stack = try ctx.locator.resolve(req.stack, diagnostics: ctx.diagnostics)
        ctx.phase("up: stack resolved")
        let existing = ctx.fs.isDirectory(dir)
        let listing = req.dryRun ? nil : PoolClaim.Listing.ahead(ctx, req, existing: existing)
        // Not waited for when no claim reads it (a few reads of the API server, answered or not).
        defer { listing?.cancel() }
        // The agent's own image when the cluster has it (before the user's --config, which wins), looked for beside
        // the plan and the claim, and waited for only when no member is claimed (a member runs its pool's image).
        let ctx = self.ctx
        let agentImage = existing || req.dryRun ? nil : Task { await AgentImage(ctx: ctx).lookup(req, stack: stack) }
        defer { agentImage?.cancel() }
        var plan = try await WorkspacePlan.make(ctx, req, stack: stack, name: name, existing: existing)
        ctx.phase("up: plan made (the checkout read)")
        if req.dryRun {
            plan.source = await plan.counted(plan.source)
            return try await dryRun(req, stack: stack, name: name, dir: dir, plan: plan)
        }
        var created = false
        if existing {
            let ignored = notApplied(req, dir: dir)
            if !ignored.isEmpty {
                ctx.diagnostics.warn(
                    "\(name) already exists; \(ignored.joined(separator: ", ")) \(ignored.count == 1 ? "is" : "are") not applied to it",
                    hint:
                        "edit \(Path.join(dir, "spec.yml")) and run 'so deployment --name \(name) restart', or 'so down \(name)' first"
                )
            }
            ctx.say("\(name) exists; starting it again")
        } else if let claimed = try await claimFromPool(req, name: name, dir: dir, plan: plan, listing: listing) {
            await keepPool(req, dir: dir, source: claimed.source, claimed: true)
            return claimed
        } else {
            if let found = await agentImage?.value {
                if let note = found.note { ctx.say(note) }
                plan.config = found.config + plan.config
            }
            try await create(req, stack: stack, name: name, dir: dir, plan: plan)
            created = true
        }
        let isWorkspace = ctx.isWorkspace(dir)
        if let note = plan.note { ctx.say(note) }
        var source = await plan.counted(plan.source)
        if let s = source { for line in s.lines() { ctx.say(line) } }
        do {
            if let bytes = try await start(req, name: name, dir: dir, plan: plan, checkFirst: !created) {
                source?.bundleBytes = bytes
            }
        } catch {
            if created {
                // It never ran, so it holds no work: a workspace's down needs --discard only because it cannot read it.
                ctx.diagnostics.warn(
                    "\(name) was created but did not start",
                    hint: "fix the cause, then 'so up \(req.stack) --name \(name)' again, "
                        + "or 'so down \(name)\(isWorkspace ? " --discard" : "")'")
            }
            throw error
        }
        if created && isWorkspace { await keepPool(req, dir: dir, source: source, claimed: false) }
        return UpResult(
            name: name, namespace: name, directory: dir, created: created, ready: req.wait, workspace: isWorkspace,
            source: source, note: plan.note)
    }

    /// The spec's `workspace.pool` kept (`PoolFromSpec`); a failure is a warning (the workspace is there either way).
    func keepPool(_ req: UpRequest, dir: String, source: WorkspaceSource?, claimed: Bool) async {
        guard req.poolMember == nil, !req.noPool else { return }
        do { try await PoolFromSpec(ctx: ctx).keep(req, dir: dir, source: source, claimed: claimed) } catch {
            ctx.diagnostics.warn(
                "the spec's workspace.pool was not kept: \(SoContext.oneLine(error))",
                hint: "make the pool by hand: so pool create \(req.stack) --size N")
        }
    }

    /// A new workspace carried in from a checkout, from a warm pool when one fits (`PoolClaim`): the member
    /// claimed, the checkout carried in, then the pool refilled by a process of its own (`so pool fill POOL
    /// --at-most 1`, detached); nil when it goes the cold way.
    func claimFromPool(
        _ req: UpRequest, name: String, dir: String, plan: WorkspacePlan, listing: PoolClaim.Listing? = nil
    ) async throws -> UpResult? {
        guard req.poolMember == nil, !req.noPool else { return nil }
        // As init reads --config; one it cannot read is left to init to refuse.
        let pairs = req.config.flatMap { (try? InitAction.parseConfigArgument($0)) ?? [] }
        let given = Dictionary(pairs, uniquingKeysWith: { $1 })
        guard let checkout = ClaimedCheckout(plan, given: given) else { return nil }
        let ctx = self.ctx
        // Where a remote's branch is, asked while the pool is chosen and its member claimed (the member's own ask
        // came only after the hand-over had started); not waited for when no member is claimed.
        var tip = RemoteTip.asking(ctx, checkout)
        defer { tip?.cancel() }
        // Who the workspace's commits are by: as a cold `up`'s (the member names no one), asked of git while the pool
        // is chosen.
        let repository = plan.source?.repository
        let named = Set(pairs.map(\.0))
        let fromGit = Task { await Self.askGit(ctx, given: named, in: repository) }
        let claim = PoolClaim(ctx: ctx)
        // Chosen ahead, while the checkout was read; else chosen now (saying why where none fits).
        let choice: PoolClaim.Choice
        if let listing { choice = try await listing.chosen(ctx) } else { choice = try await claim.choose(req) }
        guard let pool = choice.pool else { return nil }
        tip = RemoteTip.kept(tip, by: pool, checkout)
        // The bundle is made while the API server is asked for a member: neither needs the other.
        let bundle = Task { () throws -> CarryIn.Bundle? in
            guard case .bundle(let carry, let source) = checkout else { return nil }
            // Thin where the member's warm-up fetched this checkout's origin: its history is there already.
            let after = Task { await carry.thinAfter(source, warmURL: RemoteTip.warmURL(pool.config)) }
            return try await carry.bundle(source, workspace: name, after: after)
        }
        let branch = given["WORKSPACE_BRANCH"].flatMap { $0.isEmpty ? nil : $0 } ?? "agent/\(name)"
        let claimed: PoolClaim.Claimed?
        let identity: GitIdentity
        do {
            identity = GitIdentity(config: await fromGit.value + pairs)
            claimed = try await claim.claim(
                pool, name: name, dir: dir, reach: checkout.reach, cluster: req.cluster, listed: listing,
                keys: PoolClaim.workspaceKeys(name: name, identity: identity, given: pairs))
        } catch {
            await Self.discard(bundle, checkout)
            throw error
        }
        guard let claimed else {
            await Self.discard(bundle, checkout)
            return nil
        }
        var result = UpResult(
            name: name, namespace: claimed.namespace, directory: dir, created: true, ready: req.wait, workspace: true,
            source: checkout.source, note: "claimed from pool \(pool.name)")
        let record = ClaimRecord(ctx, claimed)
        do {
            let bytes = try await carryIntoClaimed(
                req, name: name, dir: dir, checkout: checkout, bundle: bundle, branch: branch, identity: identity,
                claimed: claimed, record: record, tip: tip)
            result.source?.bundleBytes = bytes
            try await record.wait()
        } catch let error as SoError {
            // best effort: the workspace goes whether or not its Namespace was named (the error said why)
            _ = try? await record.wait()
            // A claimed workspace that failed before its checkout was in holds no work: it goes, and NAME starts cold.
            ctx.diagnostics.warn(
                "the workspace claimed from pool \(pool.name) failed before it was ready: \(error.message); starting \(name) cold"
            )
            try await discardClaimed(name, cluster: req.cluster)
            PoolAction(ctx).refillDetached(pool, cluster: req.cluster, stack: choice.copy)
            return nil
        } catch {
            // Interrupted, or another failure: the Namespace's naming under way ends first (as it did before the carry).
            _ = try? await record.wait()
            throw error
        }
        // HEAD's history, counted while the claim went on, for what is printed.
        result.source = await plan.counted(result.source)
        // Once the workspace is ready, and in a process of its own: nothing of the next member is in this up's way.
        // (Started as the member was claimed, its own start, 10-15 ms of a processor, went beside the hand-over's exec
        // on 2 cores: that exec took 109 ms where it took 94, medians of 8 claims on the real node.)
        PoolAction(ctx).refillDetached(pool, cluster: req.cluster, stack: choice.copy)
        return result
    }

    /// A claimed workspace that failed before it was ready, gone, quietly (it holds no work).
    func discardClaimed(_ name: String, cluster: ClusterOptions) async throws {
        var quiet = ctx
        quiet.options.quiet = true
        var down = DownRequest(name: name)
        down.cluster = cluster
        down.discard = true
        try await DownAction(quiet).run(down)
    }

    /// A bundle made ahead for a claim that did not happen, removed.
    static func discard(_ bundle: Task<CarryIn.Bundle?, Error>, _ checkout: ClaimedCheckout) async {
        // One that failed left nothing to remove (the cold way makes its own and says what fails).
        if case .bundle(let carry, _) = checkout, let made = try? await bundle.value { carry.done(made) }
    }

    /// The checkout carried into a claimed member (`bundle`, made meanwhile, or the remote its clone fetches), and
    /// (with wait) its clone done: the bundle's size (0 for a remote). `claimed`: the member, its pool, and the pod its
    /// container ran in when the pool was listed (believed, and looked for again only if it is gone); handed over
    /// through its listener when that pod runs it alone (`handOverForwarded`), else by exec. `record`: the claim's revision,
    /// started from the deployment opened here as the hand-over begins (the files read once for both). `tip`: where a
    /// remote's branch is, asked meanwhile (`RemoteTip`), handed in by the hand-over once known.
    func carryIntoClaimed(
        _ req: UpRequest, name: String, dir: String, checkout: ClaimedCheckout,
        bundle made: Task<CarryIn.Bundle?, Error>,
        branch: String, identity: GitIdentity, claimed: PoolClaim.Claimed, record: ClaimRecord? = nil,
        tip: Task<RemoteTip?, Never>? = nil
    ) async throws -> UInt64 {
        let (pod, pool, forward) = (claimed.pod, (record: claimed.pool, namespace: claimed.namespace), claimed.alone)
        let w: WorkspaceContainer
        do {
            w = try await WorkspaceContainer.running(
                ctx, directory: dir, cluster: req.cluster, timeout: req.timeout, known: pod)
            ctx.phase("claim: workspace container opened")
        } catch {
            await Self.discard(made, checkout)
            throw error
        }
        // The claim's revision goes beside the hand-over, from the files the hand-over's deployment was opened from.
        record?.start(w.c.model)
        // The claimer's credentials go in beside the checkout (the member was made with no one's): the Secret's
        // values beside the hand-over; the container's file by the hand-over's own exec (one exec, before its clone,
        // which fetches with them; before the bundle, on the same stdin).
        let ctx = self.ctx
        let credentials = ClaimCredentials(ctx: ctx)
        switch checkout {
        case .bundle(let carry, let source):
            let values = try credentials.values(w, pool: pool)
            async let patched: Void = credentials.patch(w, values)
            // Through the member's listener where it has one (`deliverForwarded`); else the exec starts now, and reads
            // the bundle once it is made (its connection and the node's exec meanwhile).
            let (bundle, _) = try await w.deliver(
                carry,
                {
                    // Made for a checkout, always (nil is a remote's).
                    guard let b = try await made.value else { throw SoError("no bundle was made for \(name)") }
                    return b
                }, ref: source.branch, branch: branch, origin: source.origin, identity: identity,
                waitFor: req.wait ? req.timeout : nil, credentials: values, forward: forward)
            try await patched
            return bundle.bytes
        case .remote(let repo, let ref):
            let values = try credentials.values(w, pool: pool)
            async let patched: Void = credentials.patch(w, values)
            // Through the member's listener where it has one (`handOverForwarded`), else by exec.
            try await w.handOver(
                repo: repo, ref: ref, branch: branch, identity: identity, waitFor: req.wait ? req.timeout : nil,
                credentials: values, tip: tip, forward: forward)
            try await patched
            return 0
        }
    }

    /// The flags of an `up` of a deployment that exists which would change it, and so are not applied: a
    /// `--config K=V` whose value its config.env does not already hold (the same `up` run again, as CI
    /// does, says nothing), and `--with` and `--agent`, whatever they name.
    func notApplied(_ req: UpRequest, dir: String) -> [String] {
        // An unreadable config.env holds nothing: every --config is named.
        let held = Dictionary(
            ((try? ConfigEnv.load(Path.join(dir, "config.env"), fs: ctx.fs)) ?? []).map { ($0.key, $0.value) },
            uniquingKeysWith: { _, last in last })
        var out: [String] = req.config.flatMap { arg -> [String] in
            // As init reads it (laconic's K=V,K2=V2 included); one it cannot read is named whole.
            guard let pairs = try? InitAction.parseConfigArgument(arg) else { return ["--config \(arg)"] }
            return pairs.filter { held[$0.0] != $0.1 }.map { "--config \($0.0)" }
        }
        if req.with != nil { out.append("--with") }
        if req.agent != nil { out.append("--agent") }
        if req.idle != nil { out.append("--idle") }
        return out
    }

    /// Makes the deployment directory of a new `up`: a spec from the stack (the workspace's name, git identity,
    /// the plan's and the user's config), then the directory, quietly.
    func create(_ req: UpRequest, stack: ResolvedStack, name: String, dir: String, plan: WorkspacePlan) async throws {
        try ctx.fs.createDirectory(Path.dirname(dir))
        let specPath = dir + ".spec-\(getpid()).yml"
        // best effort: a stray .spec-PID.yml beside the deployment is harmless
        defer { try? ctx.fs.remove(specPath) }
        try await make(req, stack: stack, name: name, plan: plan, specPath: specPath, into: dir)
    }

    /// The spec (at `specPath`) and deployment directory `dir` of workspace `name`, made quietly: init from the
    /// stack with the workspace's name, git identity, the plan's and the user's config, then create.
    func make(
        _ req: UpRequest, stack: ResolvedStack, name: String, plan: WorkspacePlan, specPath: String, into dir: String
    )
        async throws
    {
        var quiet = ctx
        quiet.options.quiet = true
        var initReq = InitRequest(
            stack: req.stack,
            config: ["WORKSPACE_NAME=\(name)"]
                // A pool's member is no one's: its claim hands in the claimer's identity (`claimFromPool`).
                + (req.poolMember != nil ? [] : try await gitIdentity(req, stack: stack, in: plan.source?.repository))
                + plan.config + req.config,
            output: specPath, force: true, with: req.with)
        initReq.deployTo = "k8s-kind"
        initReq.resolved = stack
        try await InitAction(quiet).run(initReq)
        try setNamespace(name, specPath: specPath)
        if let agent = req.agent { try setAgent(agent, specPath: specPath) }
        if let idle = req.idle { try setWorkspaceKey("idle", idle, specPath: specPath) }
        var createReq = CreateRequest(specFile: specPath, deploymentDir: dir)
        createReq.resolved = stack
        do {
            _ = try await CreateAction(quiet).run(createReq)
        } catch let e as SoError where e.location?.file == specPath {
            // The spec is removed once made: the error names where its value came from instead.
            let text = (try? ctx.fs.readText(specPath, limit: YAMLFile.maxBytes, what: "spec")) ?? ""
            throw SpecOrigin.relocate(e, specText: text, defaults: stack.file.specDefaults, workspace: name)
        }
        if let port = req.preview { try UpAction(quiet).addPreview(dir: dir, host: "\(name).localhost", port: port) }
    }

    /// Starts the deployment `up` made (or found); a checkout to carry in goes in beside the start. The bundle's
    /// size when one was carried.
    func start(_ req: UpRequest, name: String, dir: String, plan: WorkspacePlan, checkFirst: Bool) async throws
        -> UInt64?
    {
        var request = StartRequest(
            directory: dir, cluster: req.cluster, wait: req.wait, timeout: req.timeout, progress: req.progress,
            ttl: req.ttl)
        // A pool's member holds no one's credentials: the claim hands in the claimer's.
        request.withholdSecretEnv = req.poolMember != nil
        request.verb = req.poolMember == nil ? "up" : "pool fill"
        guard let carry = plan.carry, let s = plan.source else {
            try await StartAction(ctx).run(request)
            return nil
        }
        // The carry's exec waits for the clone, then runs the container's readiness probe, and says so to the start's
        // wait (`ReadyConfirmation`): it still waits for the kubelet's Ready, but nudges the kubelet soon after where it
        // missed its probe's first run (else half a second after the container ran unready). Not a pool's member: its
        // clone waits for a claim.
        let confirmation = req.wait && req.poolMember == nil ? ReadyConfirmation() : nil
        request.confirmation = confirmation
        let start = request
        // The start and the carrying run side by side: the clone (the agent container's entrypoint)
        // waits for the bundle, and the start's wait for the clone.
        let ctx = self.ctx
        let bytes = try await withThrowingTaskGroup(of: UInt64?.self) { group in
            group.addTask {
                try await StartAction(ctx).run(start)
                return nil
            }
            group.addTask {
                try await Self.carryIn(
                    ctx, carry, s, name: name, dir: dir, req: req, checkFirst: checkFirst, confirmation: confirmation)
            }
            var bytes: UInt64 = 0
            for try await b in group { if let b { bytes = b } }
            return bytes
        }
        if bytes > 0 {
            ctx.say("  carried in: a git bundle of \(WorkspaceSource.bytes(bytes)) over the Kubernetes API")
        }
        return bytes
    }

    /// Bundles the checkout, waits for the workspace's container, and streams the bundle in; the size
    /// carried (0 when the workspace already held its checkout, which is kept). A new workspace's bundle is made
    /// while its volume and container are: neither needs the other. With `confirmation`, the same exec then waits for
    /// the clone and runs the container's readiness probe, and a pass is told to it.
    static func carryIn(
        _ ctx: SoContext, _ carry: CarryIn, _ source: WorkspaceSource, name: String, dir: String, req: UpRequest,
        checkFirst: Bool, confirmation: ReadyConfirmation? = nil
    ) async throws -> UInt64 {
        let ahead: Task<CarryIn.Bundle?, Error>? =
            checkFirst ? nil : Task { try await carry.bundle(source, workspace: name) }
        let w: WorkspaceContainer
        do {
            w = try await WorkspaceContainer.running(ctx, directory: dir, cluster: req.cluster, timeout: req.timeout)
        } catch {
            if let ahead { await discard(ahead, .bundle(carry, source)) }
            throw error
        }
        if checkFirst, try await w.hasCheckout() {
            ctx.say("\(name) already holds its checkout; keeping it (nothing carried in)")
            return 0
        }
        let probe = confirmation == nil ? nil : w.readinessProbe
        let handed = try await w.deliver(
            carry,
            {
                if let ahead, let made = try await ahead.value { return made }
                return try await carry.bundle(source, workspace: name)
            }, ref: source.branch, waitFor: probe == nil ? nil : req.timeout, probe: probe)
        if handed.proved, let confirmation, let pod = w.pod {
            await confirmation.confirm(pod: pod, container: w.container)
        }
        return handed.bundle.bytes
    }

    /// `so up --agent NAME`: the spec's `workspace.agent`, checked against the stack's table.
    func setAgent(_ agent: String, specPath: String) throws { try setWorkspaceKey("agent", agent, specPath: specPath) }

    /// `so up --agent NAME`, `--idle DURATION`: a key of the spec's `workspace:`.
    func setWorkspaceKey(_ key: String, _ value: String, specPath: String) throws {
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath), file: specPath)
        try spec.set(["workspace", key], .string(value))
        try ctx.fs.writeText(spec.text, to: specPath)
    }

    /// For a workspace stack (spec-defaults `workspace:`), the agent's commits are by the invoking user's
    /// `git config user.name/email` unless `--config GIT_USER_NAME=…/GIT_USER_EMAIL=…` says otherwise
    /// (the stack's compose falls back to a clear default when neither is set).
    func gitIdentity(_ req: UpRequest, stack: ResolvedStack, in repository: String? = nil) async throws -> [String] {
        let given = Set(req.config.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        guard !given.contains("GIT_USER_NAME") || !given.contains("GIT_USER_EMAIL") else { return [] }
        // spec-defaults is a mapping: StackFile.load checked it (`entries` cannot fail here).
        guard let defaults = stack.file.specDefaults,
            (try? defaults.entries("'spec-defaults'"))?.contains(where: { $0.key == "workspace" }) == true
        else { return [] }
        return await Self.askGit(ctx, given: given, in: repository).map { "\($0.0)=\($0.1)" }
    }

    /// `git config user.name/email` (in `repository`, else the user's) as `GIT_USER_NAME`/`GIT_USER_EMAIL` pairs, for
    /// the keys not `given`; none when git is not there or has none.
    static func askGit(_ ctx: SoContext, given: Set<String>, in repository: String?) async -> [(String, String)] {
        // No git, or no identity set: the agent commits as the image's default user, as without this.
        guard
            let r = try? await ctx.processes.run(
                ["git"] + (repository.map { ["-C", $0] } ?? []) + ["config", "--get-regexp", "^user\\.(name|email)$"],
                workingDirectory: nil, environment: nil, timeout: 10),
            r.exitCode == 0
        else { return [] }
        var out: [(String, String)] = []
        for line in r.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].trimmedSpaces.isEmpty else { continue }
            if parts[0] == "user.name" && !given.contains("GIT_USER_NAME") {
                out.append(("GIT_USER_NAME", parts[1].trimmedSpaces))
            }
            if parts[0] == "user.email" && !given.contains("GIT_USER_EMAIL") {
                out.append(("GIT_USER_EMAIL", parts[1].trimmedSpaces))
            }
        }
        return out
    }

    /// `up --dry-run`: an existing workspace is planned as it is; a new one is made in a temporary directory
    /// (removed at the end) so the API server can judge exactly what `up` would apply.
    func dryRun(_ req: UpRequest, stack: ResolvedStack, name: String, dir: String, plan source: WorkspacePlan)
        async throws -> UpResult
    {
        var plan: [PlannedChange] = []
        if let s = source.source { for line in s.lines(planned: true) { ctx.console.out(line) } }
        if let note = source.note { ctx.console.out(note) }
        if ctx.fs.isDirectory(dir) {
            plan = try await StartAction(ctx).run(
                StartRequest(directory: dir, cluster: req.cluster, ttl: req.ttl, dryRun: true)
            ).plan
            return UpResult(
                name: name, namespace: name, directory: dir, created: false, ready: false, plan: plan,
                source: source.source, note: source.note)
        }
        let scratch = try ctx.fs.temporaryDirectory(
            beside: Path.join(ctx.temporaryRoot, "so-up"),
            prefix: "so-up-dry-run")
        // best effort: a scratch dir in the temp dir, nothing in it is kept
        defer { try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-up-dry-run")) }
        let specPath = Path.join(scratch, "spec.yml")
        let draft = Path.join(scratch, name)
        try await make(req, stack: stack, name: name, plan: source, specPath: specPath, into: draft)
        ctx.console.out("would create deployment directory \(dir)")
        plan = try await StartAction(ctx).run(
            StartRequest(directory: draft, cluster: req.cluster, ttl: req.ttl, dryRun: true)
        ).plan
        return UpResult(
            name: name, namespace: name, directory: dir, created: true, ready: false, plan: plan, source: source.source,
            note: source.note)
    }

    /// Routes `<name>.localhost` to the service that exposes `port` (an http-proxy entry in D/spec.yml).
    func addPreview(dir: String, host: String, port: Int) throws {
        let model = try DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: ctx.diagnostics)
        let services = try Renderer.ports(of: model).services.filter { !$0.isInitContainer }
        guard let svc = services.first(where: { s in s.listens.contains { $0.number == port } }) else {
            throw SoError(
                "no service of \(model.stackName) exposes port \(port) for --preview",
                hint: "ports it exposes: "
                    + services.flatMap { s in s.listens.map { "\(s.name):\($0)" } }.joined(separator: ", "))
        }
        let specPath = Path.join(dir, "spec.yml")
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath), file: specPath)
        let route: YValue = .map([
            ("host-name", .string(host)),
            ("routes", .list([.map([("path", .string("/")), ("proxy-to", .string("\(svc.name):\(port)"))])])),
        ])
        try spec.insert(route, intoListAt: ["network", "http-proxy"])
        try AtomicWrite.text(spec.text, to: specPath, fs: ctx.fs)
    }

    /// Sets the spec's `namespace:` (the workspace's name), replacing one the spec already has.
    func setNamespace(_ name: String, specPath: String) throws {
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath), file: specPath)
        try spec.set(["namespace"], .string(name))
        try ctx.fs.writeText(spec.text, to: specPath)
    }
}
