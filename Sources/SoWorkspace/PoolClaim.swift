import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// `so up` in a checkout with a warm pool of the same stack and options: a member is claimed instead of
/// starting a workspace cold. The claim is a Lease created in the member's namespace (the API server lets one
/// creator win); the member's directory becomes `$SO_HOME/deployments/NAME`, its Namespace says so, and the
/// checkout is carried in as for a cold workspace, with your credentials (`ClaimCredentials`: members hold no
/// one's). A member that does not fit (its egress does not reach the checkout's origin) is not claimed; `up` says
/// why and goes cold.
struct PoolClaim {
    let ctx: SoContext

    /// What `up` got: the member (now the workspace NAME) and its namespace.
    struct Claimed {
        var member: String
        var namespace: String
        var pool: PoolRecord
        /// The pod its workspace container ran in when the pool was listed.
        var pod: String?
        /// That pod runs the workspace's container alone (`PoolAction.Member.alone`).
        var alone = false
        /// The workspace's name on the member's Namespace, being written while the checkout is carried in (its
        /// answer, the Namespace, is what the claim's revision starts from: `ClaimRecord`). A failure to name it is
        /// the claim's.
        var named: Task<JSON, Error>? = nil
        /// Where the claim's revision of the record is written (the member's namespace, on the claim's API server).
        var client: ClusterClient? = nil
        var connection: ClusterConnection? = nil
    }

    /// Keys of `--config` that belong to one workspace, not to a pool's members.
    static let perWorkspace: Set<String> = [
        "GIT_REPO", "GIT_REF", "GIT_ORIGIN", "GIT_CARRY", "WORKSPACE_NAME", "WORKSPACE_BRANCH", "GIT_USER_NAME",
        "GIT_USER_EMAIL",
    ]

    /// The pool a claim takes from, chosen before `up` has read the checkout, and its members asked for meanwhile
    /// (neither needs the other). What the choice passed over is said when the claim is made (`chosen`).
    struct Listing {
        let choice: Task<Choice, Error>
        /// The chosen pool's members ([] when none was chosen).
        let members: Task<[PoolAction.Member], Error>
        /// The workspaces' Namespaces, listed beside the pools (`ListAction`, without the Deployments' counts).
        let workspaces: Task<(ClusterClient, [DeploymentListing]), Error>

        /// Nil when `up` would claim from no pool (a workspace that exists, `--no-pool`). The pools and the
        /// workspaces are asked for at once (one round trip, where the members waited for the pools' answer), then
        /// the chosen pool's members' pods: a claim waits for two round trips before its Lease.
        static func ahead(_ ctx: SoContext, _ req: UpRequest, existing: Bool) -> Listing? {
            guard req.poolMember == nil, !req.noPool, !existing else { return nil }
            let choice = Task { try await PoolClaim(ctx: ctx).choosing(req) }
            let workspaces = Task { () throws -> (ClusterClient, [DeploymentListing]) in
                let client = try ctx.connect(try await ClusterTargets(ctx: ctx).shared(req.cluster).connection)
                return (client, try await ListAction(ctx).list(client, counts: false))
            }
            return Listing(
                choice: choice,
                members: Task {
                    guard let pool = try await choice.value.pool else {
                        workspaces.cancel()
                        return []
                    }
                    let (client, listed) = try await workspaces.value
                    return try await PoolAction(ctx).members(pool.name, listed: listed, client: client)
                }, workspaces: workspaces)
        }

        /// What no claim reads is not waited for.
        func cancel() {
            members.cancel()
            workspaces.cancel()
        }

        /// The pool chosen ahead (nil: none fits), saying what the choice passed over; what `choose` would throw.
        func chosen(_ ctx: SoContext) async throws -> Choice {
            let c = try await choice.value
            for note in c.passedOver { ctx.say(note) }
            return c
        }
    }

    /// A pool chosen (nil: none fits), and the pools passed over before it (a line each, with why).
    struct Choice: Sendable {
        var pool: PoolRecord?
        var passedOver: [String]
        /// This machine's copy of the pool's stack, where the pool names a path this machine does not have.
        var copy: String? = nil
    }

    /// The pool to claim from: the one named (`--pool`), else the first made of the same stack and options;
    /// nil when none fits (each one that does not is named, with why).
    func choose(_ req: UpRequest) async throws -> Choice {
        let c = try await choosing(req)
        for note in c.passedOver { ctx.say(note) }
        return c
    }

    /// The choice, saying nothing. Pools are the cluster's (`PoolStore`): one of another machine fits when its
    /// stack is the same files as this up's, wherever they are.
    func choosing(_ req: UpRequest) async throws -> Choice {
        // This up's stack and its files, read once, while the pools are asked for (neither needs the other); every
        // pool of the same stack is judged against them.
        let ctx = self.ctx
        let reading = Task { () -> StackNow in
            // A stack that cannot be read matches no pool by its files (the cold way says why it cannot be read).
            let resolved = try? ctx.locator.resolve(req.stack, diagnostics: DiagnosticSink.dropped("the stack again"))
            return StackNow(resolved: resolved, files: resolved.flatMap { try? PoolRecord.fingerprint($0, fs: ctx.fs) })
        }
        let pools: [PoolRecord]
        do { pools = try await PoolStore.open(ctx, req.cluster).all() } catch let e as SoError where req.pool == nil {
            reading.cancel()
            // The cold way needs none of them (and says what is wrong with the cluster, if anything is).
            return Choice(pool: nil, passedOver: ["pools not looked at: \(e.message)"])
        }
        let now = await reading.value
        let files = now.files
        let stack = PoolRecord.stackKey(ctx, req.stack)
        /// Where this machine has `p`'s stack when `p` names another path: this up's, if it is the same files.
        func copy(_ p: PoolRecord) -> String? {
            PoolRecord.stackKey(ctx, p.stack) != stack && !p.files.isEmpty && p.files == files ? stack : nil
        }
        /// This up's stack as read, for a pool whose stack is it (its own path, or this machine's copy of it).
        func mine(_ p: PoolRecord) -> StackNow? {
            PoolRecord.stackKey(ctx, p.stack) == stack || copy(p) != nil ? now : nil
        }
        if let named = req.pool {
            guard let p = pools.first(where: { $0.name == named }) else {
                throw SoError.usage("no pool named '\(named)' on the cluster", hint: "see the pools: so pool list")
            }
            if let why = mismatch(p, req, copy: copy(p), read: mine(p)) {
                throw SoError.usage(
                    "pool \(named) does not fit this workspace: \(why)", hint: "drop --pool, or make a pool that fits")
            }
            return Choice(pool: p, passedOver: [], copy: copy(p))
        }
        var passedOver: [String] = []
        for p in pools where PoolRecord.stackKey(ctx, p.stack) == stack || copy(p) != nil {
            if let why = mismatch(p, req, copy: copy(p), read: mine(p)) {
                passedOver.append("pool \(p.name) not used: \(why)")
                continue
            }
            return Choice(pool: p, passedOver: passedOver, copy: copy(p))
        }
        return Choice(pool: nil, passedOver: passedOver)
    }

    /// This up's stack as `choosing` read it: resolved, and its files' fingerprint (nil: it cannot be read).
    struct StackNow: Sendable {
        var resolved: ResolvedStack?
        var files: [String: String]?
    }

    /// Why the pool's members are not this workspace (its `--with`, `--agent` or other `--config`), or nil.
    /// `copy`: this machine's copy of the pool's stack (`choosing`). `read`: the pool's stack as `choosing` read it
    /// (this up's), judged without reading it again.
    func mismatch(_ p: PoolRecord, _ req: UpRequest, copy: String? = nil, read: StackNow? = nil) -> String? {
        let changed: [String]?
        if let read {
            changed = read.resolved == nil ? nil : read.files.map { p.changed(now: $0) }
        } else {
            // A stack that cannot be read now fits nothing (the cold way says why).
            changed = (try? p.stackHere(ctx, copy: copy)).flatMap { try? p.changed($0.1, fs: ctx.fs) }
        }
        if let changed {
            if !changed.isEmpty { return "it no longer matches its stack (\(changed.joined(separator: ", ")) changed)" }
        } else {
            return "its stack \(p.stack) cannot be read on this machine"
        }
        func listed(_ with: [String]?) -> String { (with ?? []).isEmpty ? "none" : (with ?? []).joined(separator: ",") }
        if (req.with ?? []).sorted() != (p.with ?? []).sorted() {
            return "its --with is \(listed(p.with)), this workspace's \(listed(req.with))"
        }
        if req.agent != p.agent {
            return
                "its --agent is \(p.agent ?? "the stack's default"), this workspace's \(req.agent ?? "the stack's default")"
        }
        func shared(_ config: [String]) -> [String: String] {
            var out: [String: String] = [:]
            for arg in config {
                // As init reads it; one it cannot read makes the two differ.
                for (k, v) in (try? InitAction.parseConfigArgument(arg)) ?? [(arg, "")]
                where !Self.perWorkspace.contains(k) {
                    out[k] = v
                }
            }
            return out
        }
        let mine = shared(req.config)
        let theirs = shared(p.config)
        if mine != theirs {
            let keys = Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
            return "its --config differs in \(keys.joined(separator: ", "))"
        }
        return nil
    }

    /// The repository a workspace needs its member's egress to reach: the checkout's origin (GIT_ORIGIN) for one
    /// carried in, the remote it clones (GIT_REPO) for one from a remote.
    struct Reach: Sendable {
        var key: String
        var url: String
    }

    /// The pool's warm members, as listed ahead when they were.
    func warm(_ pool: PoolRecord, cluster: ClusterOptions, listed: Listing?) async throws -> [PoolAction.Member] {
        if let listed, try await listed.choice.value.pool?.name == pool.name {
            return try await listed.members.value.filter(\.warm)
        }
        return try await PoolAction(ctx).members(pool.name, cluster: cluster).filter(\.warm)
    }

    /// Claims a warm member of `pool` for the workspace `name`, whose repository is `reach`: nil (saying why) when
    /// none can be, and the cold way is taken. `listed`: the pool's members, asked for ahead (`Listing`).
    /// `keys`: the workspace's own config (`workspaceKeys`), written into its files once they are its.
    func claim(
        _ pool: PoolRecord, name: String, dir: String, reach: Reach, cluster: ClusterOptions, listed: Listing? = nil,
        keys: [(String, String)] = []
    )
        async throws
        -> Claimed?
    {
        let members = try await warm(pool, cluster: cluster, listed: listed)
        ctx.phase("claim: members listed")
        guard !members.isEmpty else {
            ctx.say("pool \(pool.name) has no warm workspace; starting \(name) cold")
            return nil
        }
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        let client = try ctx.connect(target.connection)
        for m in members {
            // nil: another up got it first (or a removal).
            guard
                try await client.create(Self.lease(m.listing, holder: "\(name)@\(ctx.hostName)"), fieldManager: "so")
                    != nil
            else { continue }
            let namespace = m.listing.namespace
            // Gives the member back: best effort, a Lease left behind only keeps the member from being claimed again.
            let release: @Sendable () async -> Void = {
                _ = try? await client.delete(
                    .lease, name: "so-pool-claim", namespace: namespace, propagation: .background)
            }
            // Given back when this up is interrupted before the member is this workspace.
            let giveBack = ctx.releasingOnInterrupt(release)
            defer { ctx.interrupts.done(giveBack) }
            // The member is this up's alone from here. Whatever fails before its files are the workspace's gives it
            // back.
            ctx.phase("claim: Lease created")
            do {
                if let why = try await take(
                    m.listing, pool: pool, dir: dir, reach: reach, client: client, foundIn: (target, cluster))
                {
                    await release()
                    ctx.say("pool \(pool.name) not used: \(why); starting \(name) cold")
                    return nil
                }
                ctx.phase("claim: member's files taken and checked")
                try adopt(dir, keys)
                ctx.phase("claim: workspace's keys adopted")
            } catch {
                await release()
                throw error
            }
            let patch = YValue.map([
                (
                    "metadata",
                    .map([
                        (
                            "annotations",
                            .map([
                                (DeploymentNames.directoryAnnotation, .string(dir)),
                                (DeploymentNames.Annotation.pool, .null),
                                (DeploymentNames.Annotation.claimedFrom, .string(pool.name)),
                            ])
                        )
                    ])
                )
            ])
            // The Lease stays: an up that listed the member before this claim finds it taken.
            ctx.say("\(name): claimed \(m.listing.name) from pool \(pool.name) (namespace \(m.listing.namespace))")
            // The workspace's name on its Namespace is written while the checkout is carried in (then the claim's
            // revision of the record, `ClaimRecord`): the member is this up's alone since the Lease.
            let named = Task {
                try await client.patch(
                    .namespace, name: namespace, namespace: nil, mergePatch: Data(JSONWriter.bytes(patch, .compact)))
            }
            return Claimed(
                member: m.listing.name, namespace: m.listing.namespace, pool: pool, pod: m.pod, alone: m.alone,
                named: named, client: client, connection: target.connection)
        }
        ctx.say("pool \(pool.name): every warm workspace was claimed by another up; starting \(name) cold")
        return nil
    }

    /// The claimed member's files made the workspace's in `dir`: moved, when it was made here; made from its record
    /// in the cluster, when it was made on another machine (or home). Nil, or why it does not fit (then nothing of it
    /// is left in `dir`, and its own directory stays as it was).
    func take(
        _ member: DeploymentListing, pool: PoolRecord, dir: String, reach: Reach, client: ClusterClient,
        foundIn: (target: ClusterTarget, options: ClusterOptions)? = nil
    ) async throws -> String? {
        let memberDir = try ctx.namedDeployment(member.name)
        let here = member.directory == memberDir && ctx.fs.isDirectory(memberDir)
        // What was made from the record goes when the claim does not go on (the directory is this claim's alone).
        let undo = { try? ctx.fs.removeOwnedTree(dir, owner: .labelledChild(of: Path.dirname(dir))) }
        do {
            if !here {
                var quiet = ctx
                quiet.options.quiet = true
                guard
                    try await RecordAction(quiet).materialize(
                        name: member.namespace, client: client, into: dir, foundIn: foundIn) != nil
                else {
                    throw SoError(
                        "pool \(pool.name)'s member \(member.name) has no record in the cluster to claim it from",
                        hint: "remove it where it was made (\(member.host)): so down \(member.name) --discard")
                }
            }
            let model = try DeploymentLoader.load(
                here ? memberDir : dir, fs: ctx.fs, diagnostics: DiagnosticSink.dropped("a pool member's files"))
            if let why = unfit(model, reach: reach) {
                if !here { _ = undo() }
                return why
            }
            if here { try ctx.fs.move(memberDir, to: dir) }
            return nil
        } catch {
            if !here { _ = undo() }
            throw error
        }
    }

    /// The claimed workspace's own config (`perWorkspace`), as a cold `up` of it would hold: its name, who its commits
    /// are by, and the per-workspace keys given to this `up`. What the pool's member was made with stays for the rest.
    static func workspaceKeys(name: String, identity: GitIdentity, given: [(String, String)]) -> [(String, String)] {
        var keys: [(String, String)] = [("WORKSPACE_NAME", name)] + identity.config
        for (k, v) in given where perWorkspace.contains(k) && !keys.contains(where: { $0.0 == k }) && !v.isEmpty {
            keys.append((k, v))
        }
        return keys
    }

    /// `keys` written into the claimed workspace's spec (`config:`) and config.env, so the record's claim and every
    /// later start are this workspace's, not its member's. The running container learns them from the claim's hand-over
    /// (the identity) and at its next start.
    func adopt(_ dir: String, _ keys: [(String, String)]) throws {
        guard !keys.isEmpty else { return }
        let specPath = Path.join(dir, "spec.yml")
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath, what: "spec"), file: specPath)
        for (k, v) in keys { try spec.set(["config", k], .string(v)) }
        let envPath = Path.join(dir, "config.env")
        var entries = try ConfigEnv.load(envPath, fs: ctx.fs)
        for (k, v) in keys {
            if let i = entries.firstIndex(where: { $0.key == k }) {
                entries[i].value = v
            } else {
                entries.append((k, v))
            }
        }
        let credentials = try ConfigEnv.loadCredentialsFiles(envPath, fs: ctx.fs)
        try AtomicWrite.text(spec.text, to: specPath, fs: ctx.fs)
        try AtomicWrite.text(ConfigEnv.render(entries, credentials: credentials), to: envPath, fs: ctx.fs)
    }

    /// The Lease that makes a member one taker's: a claim's, or a removal's (the API server lets one creator make it).
    static func lease(_ member: DeploymentListing, holder: String) -> KubeObject {
        KubeObject(
            apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-pool-claim", namespace: member.namespace,
            labels: DeploymentNames.controlLabels(member.id),
            body: [("spec", .map([("holderIdentity", .string(holder))]))])
    }

    /// Why a member cannot be this workspace: its repository outside the member's egress.
    func unfit(_ model: DeploymentModel, reach: Reach) -> String? {
        guard let egress = model.spec.sections.egress, !reach.url.isEmpty else { return nil }
        var config = Dictionary(model.config.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        let before = (egress.targets(config: config), egress.urlPorts(config: config))
        config[reach.key] = reach.url
        let after = (egress.targets(config: config), egress.urlPorts(config: config))
        if before.0.hosts != after.0.hosts || before.0.cidrs != after.0.cidrs || before.1 != after.1 {
            return "its egress does not reach \(reach.url) (make the pool with --config \(reach.key)=\(reach.url))"
        }
        return nil
    }
}
