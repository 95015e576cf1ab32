import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// Warm pools of workspaces (`so pool`): members made ahead of time from a stack and its options — volume bound,
/// image pulled, containers running, the clone waiting for a checkout — with no repository, no task and no name of
/// a user's in them. `so up` run in a checkout claims one (PoolClaim) and refills the pool. Members are ordinary
/// deployments (`$SO_HOME/deployments/POOL-xxxx` where they were made, their own namespace, their record in the
/// cluster) whose Namespace says `so.dev/pool: POOL`. The pool itself is recorded in the cluster (`PoolStore`): any
/// machine with the kubeconfig lists it, claims from it, refills it and removes it.
public struct PoolAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// A member as the cluster shows it.
    public struct Member: Sendable {
        public var listing: DeploymentListing
        /// Its workspace container runs, waiting for a checkout (claimable).
        public var warm: Bool
        /// The pod its workspace container runs in, when warm (a claim execs into it without looking again).
        public var pod: String? = nil
        /// That pod runs the workspace's container alone (no other container, no ephemeral one): what its loopback
        /// listens on is the workspace's (`handOverForwarded`).
        public var alone = false
    }

    /// Records the pool (or its new size and options) and makes members until `size` are there.
    public func create(_ record: PoolRecord, cluster: ClusterOptions) async throws -> [Member] {
        try NameRules.checkWorkspaceName(record.name)
        guard record.size >= 0, record.size <= 50 else {
            throw SoError.usage("a pool holds 0 to 50 workspaces: \(record.size) is not that", hint: "pass --size N")
        }
        let stack = try ctx.locator.resolve(record.stack, diagnostics: ctx.diagnostics)
        guard WorkspacePlan.carriesCheckout(ctx, stack: stack) else {
            throw SoError.usage(
                "\(record.stack) cannot be pooled: its spec-defaults config has no GIT_CARRY (a member waits for the checkout so up carries in)",
                hint: "pool a workspace stack such as agent-workspace")
        }
        var record = record
        record.stack = PoolRecord.stackKey(ctx, record.stack)
        // The stack as this machine finds it.
        let given = record.stack
        let store = try await PoolStore.open(ctx, cluster)
        let old = try await store.stored(record.name)
        if let old = old?.record {
            if !old.files.isEmpty {
                let changed = try old.changed(stack, fs: ctx.fs)
                guard changed.isEmpty else { throw Self.stale(record.name, changed) }
            }
            guard (old.config, old.with, old.agent) == (record.config, record.with, record.agent) else {
                throw SoError.usage(
                    "pool \(record.name) was made with other --config, --with or --agent",
                    hint: "remove it first (so pool remove \(record.name)), or give it another --name")
            }
            // The stack as the machine that made the pool names it: another machine's copy (the same files at
            // another path) fits it, and is named to its own refills (`fill`'s `stack`).
            if !old.files.isEmpty { record.stack = old.stack }
        }
        record.files = try PoolRecord.fingerprint(stack, fs: ctx.fs)
        record.secretEnv = old?.record.secretEnv
        try await store.save(record, over: old)
        let members = try await fill(record, cluster: cluster, stack: given == record.stack ? nil : given)
        guard record.secretEnv == nil, let names = secretEnv(of: members) else { return members }
        // What a claim hands in: the names a member made here from this machine's stack reads (never a record's).
        record.secretEnv = names
        try await store.save(record, over: try await store.stored(record.name))
        return members
    }

    /// The `secret-env` of a member this machine made (its directory here, from its own stack); nil when none is.
    func secretEnv(of members: [Member]) -> [String]? {
        for m in members {
            // A member not made here (or not loading) is not this machine's to read its names from: the next is tried.
            guard let dir = try? ctx.namedDeployment(m.listing.name), ctx.fs.isDirectory(dir),
                RecordFiles.step(in: dir, fs: ctx.fs)?.copies == nil,
                let model = try? DeploymentLoader.load(
                    dir, fs: ctx.fs, diagnostics: DiagnosticSink.dropped("a pool's member, for its secret-env"))
            else { continue }
            return model.spec.secretEnv
        }
        return nil
    }

    /// Makes members until the pool has `size` not claimed (without waiting for them: the node does that);
    /// removes idle ones beyond it.
    /// `atMost`: a claim makes one, for the member it took (claims at the same time do not overfill the pool).
    /// `stack`: where this machine has the pool's stack, when not where the machine that made the pool had it (the
    /// same files, compared).
    public func fill(
        _ record: PoolRecord, cluster: ClusterOptions, atMost: Int = .max, stack: String? = nil
    )
        async throws -> [Member]
    {
        let (stackPath, resolved) = try record.stackHere(ctx, copy: stack)
        let changed = try record.changed(resolved, fs: ctx.fs)
        guard changed.isEmpty else { throw Self.stale(record.name, changed) }
        let store = try await PoolStore.open(ctx, cluster)
        var members = try await members(record.name, cluster: cluster)
        while members.count > record.size, let extra = members.last {
            try await removeMember(extra.listing, cluster: cluster)
            members.removeLast()
        }
        var quiet = ctx
        quiet.options.quiet = true
        let missing = min(max(record.size - members.count, 0), atMost)
        let client = missing == 0 ? nil : try ctx.connect(try await ClusterTargets(ctx: ctx).shared(cluster).connection)
        for made in 0..<missing {
            // A pool removed meanwhile (by any machine) gets no more members.
            guard try await store.load(record.name) != nil else {
                ctx.say("pool \(record.name) was removed meanwhile; no more members made")
                break
            }
            // Members are alike: what the first one's start warns of (hosts that do not resolve, keys not set) is
            // said once, not once per member.
            var member = quiet
            if made > 0 { member.diagnostics = DiagnosticSink.dropped("the same warnings as the pool's first member") }
            let name = "\(record.name)-\(ctx.entropy.bytes(3).map { String(format: "%02x", $0) }.joined())"
            var req = UpRequest(stack: stackPath)
            req.name = name
            req.config = record.config
            req.with = record.with
            req.agent = record.agent
            req.wait = false
            req.cluster = cluster
            req.poolMember = record.name
            let up = try await UpAction(member).run(req)
            // Its Namespace says it is the pool's (what `members` finds it by, and a claim removes).
            _ = try await client?.annotate(
                .namespace, name: up.namespace, namespace: nil, [(DeploymentNames.Annotation.pool, record.name)])
            // A removal that deleted the record while this member was made listed the members before it was one
            // (its annotation): it goes here, or nothing would remove it.
            guard try await store.load(record.name) != nil else {
                if let client,
                    let made = try await ListAction(ctx).list(client).first(where: { $0.namespace == up.namespace })
                {
                    try await removeMember(made, cluster: cluster)
                }
                ctx.say("pool \(record.name) was removed while \(name) was made; it is removed too")
                break
            }
            ctx.say("pool \(record.name): made \(name)")
        }
        return try await self.members(record.name, cluster: cluster)
    }

    /// A claim's refill, in a process of its own (`so pool fill POOL --at-most 1`, in a session of its own, its
    /// output appended to `pools/POOL.fill.log`), so the claim returns without waiting for the next member. Its
    /// process id goes in `pools/POOL.refill` (beside those still under way), for `pool list` and `pool remove`.
    /// Members are made as by any fill: under the member Leases, one per member claimed. A refill that cannot start
    /// is a warning (the workspace is there either way).
    /// `stack`: this machine's copy of the pool's stack, when the pool names another path (`fill`).
    public func refillDetached(_ record: PoolRecord, cluster: ClusterOptions, stack: String? = nil) {
        var args = [
            ctx.selfExecutable, "pool", "fill", record.name, "--at-most", "1", "--after", String(Self.refillAfter),
        ]
        if let stack { args += ["--stack", stack] }
        if let k = cluster.kubeconfig { args += ["--kubeconfig", ctx.absolute(k)] }
        if let c = cluster.context { args += ["--context", c] }
        do {
            // Where the refill's log and process id go (the pool itself is the cluster's).
            try ctx.fs.createDirectory(PoolRecord.directory(ctx))
            let log = Path.join(PoolRecord.directory(ctx), "\(record.name).fill.log")
            let pid = try ctx.processes.spawnDetached(args, environment: nil, output: log)
            // Beside the refills of claims a moment before (still under way): a removal waits for each.
            let pids = refills(record.name) + [pid]
            try AtomicWrite.text(pids.map { "\($0)\n" }.joined(), to: Self.refillPath(ctx, record.name), fs: ctx.fs)
        } catch {
            ctx.diagnostics.warn(
                "pool \(record.name) was not refilled: \(SoContext.oneLine(error))",
                hint: "refill it: so pool fill \(record.name)")
        }
    }

    /// How long a claim's refill waits before it starts: the claimer's first commands (a shell, a task) have the
    /// node to themselves. On 2 cores a refill starting at once made the `exec` right after a claim 200–300 ms
    /// instead of 110–150. The pool is one member short that much longer, and the member's start (its pods, on a
    /// node of 2 cores) must be over before the next claim: after 2 s it met claims 3 s apart, each then 35–105 ms
    /// slower (medians of 7, three runs each, the real node) than after 1 s, with the `exec` after a claim no slower.
    static let refillAfter = 1.0

    static func refillPath(_ ctx: SoContext, _ pool: String) -> String {
        Path.join(PoolRecord.directory(ctx), "\(pool).refill")
    }

    /// The process id of a claim's refill still under way (`refillDetached`), else nil.
    public func refilling(_ pool: String) -> Int32? { refills(pool).first }

    /// The process ids of the claims' refills still under way, one a line in `pools/POOL.refill` (no file, or one
    /// that does not read: none).
    func refills(_ pool: String) -> [Int32] {
        guard let text = try? ctx.fs.readText(Self.refillPath(ctx, pool)) else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
            .filter { ctx.isProcessAlive($0) }
    }

    static func noPool(_ pool: String) -> SoError {
        SoError("no pool named '\(pool)' on the cluster", hint: "see the pools: so pool list")
    }

    /// A pool whose stack changed since its members were made: refused, naming the files.
    static func stale(_ pool: String, _ changed: [String]) -> SoError {
        SoError(
            "pool \(pool) no longer matches its stack: \(changed.joined(separator: ", ")) changed since it was made",
            hint: "make it again from the stack as it is: so pool remove \(pool), then so pool create")
    }

    /// The pool's members not claimed yet (made on any machine: a claim elsewhere makes the member's directory
    /// from its record), oldest first.
    public func members(_ pool: String, cluster: ClusterOptions) async throws -> [Member] {
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        let client = try ctx.connect(target.connection)
        return try await members(pool, listed: try await ListAction(ctx).list(client), client: client)
    }

    /// The pool's members among the workspaces `listed` (`ListAction`), their pods read.
    func members(_ pool: String, listed all: [DeploymentListing], client: ClusterClient) async throws -> [Member] {
        let listed = all.filter { $0.pool == pool && !$0.terminating }
            .sorted { ($0.createdAt ?? .distantPast, $0.name) < ($1.createdAt ?? .distantPast, $1.name) }
        // Each member's pods at once (a claim waits for these reads).
        return try await withThrowingTaskGroup(of: (Int, Member).self) { group in
            for (i, d) in listed.enumerated() {
                group.addTask {
                    let at =
                        (d.workspaceAt ?? "agent /workspace").split(separator: " ").first.map(String.init) ?? "agent"
                    let pods = try await client.list(
                        .pod, namespace: d.namespace, labelSelector: DeploymentNames.selector(d.id))
                    let running = pods.first { WorkspaceContainer.runs($0, at) }
                    let alone =
                        running?.at("spec", "containers")?.array.count == 1
                        && (running?.at("spec", "ephemeralContainers")?.array ?? []).isEmpty
                    return (i, Member(listing: d, warm: running != nil, pod: running?.name, alone: alone))
                }
            }
            var out: [(Int, Member)] = []
            for try await m in group { out.append(m) }
            return out.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Removes the pool: its record first (a refill on any machine makes no member after it), then its members not
    /// claimed (they hold no work). Claimed ones are workspaces of their own now.
    public func remove(_ pool: String, cluster: ClusterOptions) async throws {
        try NameRules.checkWorkspaceName(pool)
        let store = try await PoolStore.open(ctx, cluster)
        guard try await store.load(pool) != nil else { throw Self.noPool(pool) }
        try await store.remove(pool)
        try await waitForRefill(pool)
        for m in try await members(pool, cluster: cluster) { try await removeMember(m.listing, cluster: cluster) }
        try ctx.fs.remove(Self.refillPath(ctx, pool))
        ctx.say("removed pool \(pool)")
    }

    /// The claims' refills under way end first (up to 2 minutes, their processes looked at every 0.2 s): the members
    /// they are making are then among those removed (and one a refill on another machine makes goes by that refill).
    func waitForRefill(_ pool: String) async throws {
        let pids = refills(pool)
        guard !pids.isEmpty else { return }
        let n = pids.count
        let which =
            "\(English.plural("refill", n)) (so pool fill, \(English.plural("pid", n)) "
            + "\(pids.map(String.init).joined(separator: ", ")))"
        ctx.say("pool \(pool): waiting for its \(which) to end")
        let began = ctx.clock.now()
        while refilling(pool) != nil {
            guard ctx.clock.now().timeIntervalSince(began) < 120 else {
                ctx.diagnostics.warn(
                    "pool \(pool)'s \(which) did not end within 2 minutes; removing the pool anyway",
                    hint: "remove a member it made afterwards by its name (so deployment list): so down NAME --discard")
                return
            }
            try await ctx.clock.sleep(seconds: 0.2)
        }
    }

    /// Removes a member not claimed: it takes the member's claim Lease first, as a claim does, so a member an `up`
    /// is claiming at this moment is left to it (said), and no up claims one being removed.
    func removeMember(_ d: DeploymentListing, cluster: ClusterOptions) async throws {
        let client = try ctx.connect(try await ClusterTargets(ctx: ctx).shared(cluster).connection)
        guard
            try await client.create(PoolClaim.lease(d, holder: "removal@\(ctx.hostName)"), fieldManager: "so") != nil
        else {
            ctx.say("pool: kept \(d.name): an up is claiming it")
            return
        }
        var req = DownRequest(name: d.name)
        req.cluster = cluster
        req.discard = true
        var quiet = ctx
        quiet.options.quiet = true
        try await DownAction(quiet).run(req)
        ctx.say("pool: removed \(d.name)")
    }
}
