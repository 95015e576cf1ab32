import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// One `so` deployment found on the cluster (its namespace carries the facts).
public struct DeploymentListing: Sendable, Equatable {
    public var name: String
    public var stack: String
    public var namespace: String
    public var id: String
    public var directory: String
    public var host: String
    public var createdAt: Date?
    public var expiresAt: Date?
    public var readyDeployments: Int
    public var deployments: Int
    public var terminating: Bool

    public var ready: Bool { deployments > 0 && readyDeployments == deployments }
    public func expired(at now: Date) -> Bool { expiresAt.map { $0 <= now } ?? false }
}

/// `so deployment list` and `so cleanup`: every `so` deployment on the cluster, read in two requests
/// (namespaces and Deployments, each one labelled list) however many there are.
public struct ListAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(cluster: ClusterOptions) async throws -> [DeploymentListing] {
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        return try await list(ctx.connect(target.connection))
    }

    func list(_ client: ClusterClient) async throws -> [DeploymentListing] {
        let selector = DeploymentNames.Label.managedBySoSelector
        let namespaces = try await client.list(.namespace, namespace: nil, labelSelector: selector)
        let deployments = try await client.list(.deployment, namespace: nil, labelSelector: selector)
        var byNamespace: [String: (ready: Int, total: Int)] = [:]
        for d in deployments {
            let ns = d.at("metadata", "namespace")?.string ?? ""
            var v = byNamespace[ns] ?? (0, 0)
            v.total += 1
            if Waiter.deploymentPending(d) == nil { v.ready += 1 }
            byNamespace[ns] = v
        }
        return namespaces.compactMap { ns -> DeploymentListing? in
            let a = ns.annotations
            let labels = ns.at("metadata", "labels")?.object ?? [:]
            guard let dir = a[DeploymentNames.directoryAnnotation] else { return nil }
            let counts = byNamespace[ns.name] ?? (0, 0)
            return DeploymentListing(
                name: Path.basename(dir), stack: labels[DeploymentNames.Label.stack]?.string ?? "", namespace: ns.name,
                id: labels[DeploymentNames.Label.instance]?.string ?? labels["app"]?.string ?? ns.name, directory: dir,
                host: a[DeploymentNames.Annotation.host] ?? "", createdAt: ns.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse),
                expiresAt: a[DeploymentNames.Annotation.expiresAt].flatMap(Timestamps.parse), readyDeployments: counts.ready, deployments: counts.total,
                terminating: ns.at("status", "phase")?.string == "Terminating")
        }.sorted { ($0.name, $0.namespace) < ($1.name, $1.namespace) }
    }
}

public struct CleanupRequest: Sendable {
    public var expired = false
    public var orphaned = false
    public var olderThan: Double?
    public var dryRun = false
    public var wait = true
    public var timeout: Double = 120
    public var cluster = ClusterOptions(performClusterManagement: false)
    public init() {}
}

/// `so cleanup`: removes deployments whose TTL passed, whose directory is gone on this host, or older
/// than a duration — their namespace (with everything in it), their labelled PersistentVolumes, and the
/// directory when `so up` made it.
public struct CleanupAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(_ req: CleanupRequest) async throws -> [DeploymentListing] {
        guard req.expired || req.orphaned || req.olderThan != nil else {
            throw SoError.usage("cleanup needs a reason to remove deployments",
                    hint: "pass --expired, --orphaned and/or --older-than DURATION (add --dry-run to see the list first)")
        }
        let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
        let client = try ctx.connect(target.connection)
        let now = ctx.clock.now()
        let all = try await ListAction(ctx).list(client)
        let chosen = all.filter { d in
            if d.terminating { return false }
            if req.expired && d.expired(at: now) { return true }
            if req.orphaned && isOrphan(d) { return true }
            if let age = req.olderThan, let created = d.createdAt, now.timeIntervalSince(created) > age { return true }
            return false
        }
        for d in chosen {
            let why = req.expired && d.expired(at: now) ? "expired" : req.orphaned && isOrphan(d) ? "directory gone" : "older than the limit"
            ctx.say("\(req.dryRun ? "would remove" : "removing") \(d.name) (namespace \(d.namespace), \(why))")
        }
        if req.dryRun || chosen.isEmpty {
            if chosen.isEmpty { ctx.say("nothing to clean up (\(all.count) \(English.plural("deployment", all.count)) checked)") }
            return chosen
        }
        try await Remover(ctx: ctx, client: client).remove(chosen, wait: req.wait, timeout: req.timeout)
        return chosen
    }

    /// Only this host's own directories can be judged missing.
    func isOrphan(_ d: DeploymentListing) -> Bool {
        d.host == ctx.hostName && !ctx.fs.isDirectory(d.directory)
    }
}

/// Deletes whole deployments by namespace (no deployment directory needed).
struct Remover {
    let ctx: SoContext
    let client: ClusterClient

    func remove(_ deployments: [DeploymentListing], wait: Bool, timeout: Double) async throws {
        let nsType = ResourceType.namespace
        let pvType = ResourceType.persistentVolume
        for d in deployments {
            // Under the deployment's Lease: a start or stop of it in progress is waited for, up to the timeout. A
            // namespace already going (another run removed it) needs no deleting.
            let lock = DeploymentLock(ctx: ctx, client: client, namespace: d.namespace, deployment: d.id, duration: timeout)
            do {
                try await lock.holding(waiting: timeout, progress: ProgressReporter(ctx: ctx, mode: .auto)) {
                    _ = try await client.delete(nsType, name: d.namespace, namespace: nil, propagation: .background)
                }
            } catch {
                guard try await lock.namespaceGone() != nil else { throw error }
            }
            for pv in try await client.list(pvType, namespace: nil, labelSelector: DeploymentNames.selector(d.id)) {
                _ = try await client.delete(pvType, name: pv.name, namespace: nil, propagation: .background)
            }
            // Directories `so up` made are ours to remove; anything else is the user's.
            if d.host == ctx.hostName && Path.dirname(d.directory) == Path.join(ctx.soHome, "deployments") && ctx.fs.exists(d.directory) {
                // The directory's path came from the cluster: it is checked like any name a user gives.
                do { try ctx.removeDeploymentDirectory(d.directory, namespace: d.namespace) } catch let e as SoError {
                    ctx.diagnostics.warn(e.message, hint: e.hint)
                }
            }
        }
        guard wait else { return }
        let start = ctx.clock.now()
        var pause = 0.25
        while true {
            var left: [String] = []
            for d in deployments where try await client.get(nsType, name: d.namespace, namespace: nil) != nil { left.append(d.namespace) }
            if left.isEmpty { return }
            if ctx.clock.now().timeIntervalSince(start) >= timeout {
                throw SoError("namespaces still terminating after \(Int(timeout))s: \(left.joined(separator: ", "))",
                              hint: "look at 'kubectl get namespace \(left[0]) -o yaml' for the finalizers holding it", exitCode: SoError.exitTimeout)
            }
            try await ctx.clock.sleep(seconds: pause)
            pause = min(pause * 2, 2)
        }
    }
}

public struct UpRequest: Sendable {
    public var stack: String
    public var name: String?
    public var config: [String] = []
    public var with: [String]?
    public var ttl: Double?
    public var preview: Int?
    public var wait = true
    public var timeout: Double = 300
    public var progress: ProgressMode = .auto
    public var cluster = ClusterOptions()
    /// Write nothing and change nothing on the cluster; report what would be created and applied.
    public var dryRun = false
    /// The checkout a workspace starts from when no `GIT_REPO` is given (default: the one the current
    /// directory is in), and whether its uncommitted changes go in too.
    public var from: String?
    public var includeUncommitted = false
    /// The agent CLI of a workspace stack (an entry of its `agents:` table); nil: the stack's default.
    public var agent: String?
    public init(stack: String) { self.stack = stack }
}

public struct UpResult: Sendable {
    public var name: String
    public var namespace: String
    public var directory: String
    public var created: Bool
    public var ready: Bool
    /// The deployment is a workspace (spec `workspace:`): task, diff, push and fetch apply.
    public var workspace = false
    /// With `dryRun`: what start would do, as the API server judged it.
    public var plan: [PlannedChange] = []
    /// The local checkout the workspace started from (`so up` in a checkout, or `--from DIR`).
    public var source: WorkspaceSource?
    /// Why a workspace starts empty (no GIT_REPO and no checkout here), said once.
    public var note: String?
}

/// `so up STACK`: deploy init + create + start in one step, into `$SO_HOME/deployments/NAME` with the
/// namespace NAME. An existing NAME is started again as it is.
public struct UpAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    static let reservedNamespaces: Set<String> = ["default", "kube-system", "kube-public", "kube-node-lease", "caddy-system", "local-path-storage"]

    public func run(_ req: UpRequest) async throws -> UpResult {
        let name = req.name ?? "\(NameRules.dnsLabel(Path.basename(req.stack)).prefix(40))-\(ctx.entropy.bytes(2).map { String(format: "%02x", $0) }.joined())"
        try NameRules.checkWorkspaceName(name)
        if Self.reservedNamespaces.contains(name) || name.hasPrefix("kube-") {
            throw SoError.usage("name '\(name)' is a system namespace", hint: "choose another --name")
        }
        let dir = try ctx.namedDeployment(name)
        // The stack, resolved once for the plan, the git identity, init and create.
        let stack = try ctx.locator.resolve(req.stack, diagnostics: ctx.diagnostics)
        let plan = try await WorkspacePlan.make(ctx, req, stack: stack, name: name, existing: ctx.fs.isDirectory(dir))
        if req.dryRun { return try await dryRun(req, stack: stack, name: name, dir: dir, plan: plan) }
        var created = false
        if ctx.fs.isDirectory(dir) {
            if !req.config.isEmpty || req.with != nil || req.agent != nil {
                ctx.diagnostics.warn("\(name) already exists; --config, --with and --agent are not applied to it",
                                     hint: "edit \(Path.join(dir, "spec.yml")) and run 'so deployment --name \(name) restart', or 'so down \(name)' first")
            }
            ctx.say("\(name) exists; starting it again")
        } else {
            try ctx.fs.createDirectory(Path.dirname(dir))
            let specPath = dir + ".spec-\(getpid()).yml"
            defer { try? ctx.fs.remove(specPath) }  // best effort: a stray .spec-PID.yml beside the deployment is harmless
            var quiet = ctx
            quiet.options.quiet = true
            var initReq = InitRequest(stack: req.stack, config: ["WORKSPACE_NAME=\(name)"] + (try await gitIdentity(req, stack: stack,
                    in: plan.source?.repository)) + plan.config + req.config,
                                      output: specPath, force: true, with: req.with)
            initReq.deployTo = "k8s-kind"
            initReq.resolved = stack
            try await InitAction(quiet).run(initReq)
            try setNamespace(name, specPath: specPath)
            if let agent = req.agent { try setAgent(agent, specPath: specPath) }
            var createReq = CreateRequest(specFile: specPath, deploymentDir: dir)
            createReq.resolved = stack
            _ = try await CreateAction(quiet).run(createReq)
            if let port = req.preview { try addPreview(dir: dir, host: "\(name).localhost", port: port) }
            created = true
        }
        let isWorkspace = ctx.isWorkspace(dir)
        if let note = plan.note { ctx.say(note) }
        var source = plan.source
        if let s = source { for line in s.lines() { ctx.say(line) } }
        do {
            let start = StartRequest(directory: dir, cluster: req.cluster, wait: req.wait, timeout: req.timeout, progress: req.progress, ttl: req.ttl)
            if let carry = plan.carry, let s = source {
                // The start and the carrying run side by side: the clone (the agent container's entrypoint)
                // waits for the bundle, and the start's wait for the clone.
                let ctx = self.ctx, checkFirst = !created
                source?.bundleBytes = try await withThrowingTaskGroup(of: UInt64?.self) { group in
                    group.addTask { try await StartAction(ctx).run(start); return nil }
                    group.addTask { try await Self.carryIn(ctx, carry, s, name: name, dir: dir, req: req, checkFirst: checkFirst) }
                    var bytes: UInt64 = 0
                    for try await b in group { if let b { bytes = b } }
                    return bytes
                }
                if let b = source?.bundleBytes, b > 0 { ctx.say("  carried in: a git bundle of \(WorkspaceSource.bytes(b)) over the Kubernetes API") }
            } else {
                try await StartAction(ctx).run(start)
            }
        } catch {
            if created {
                // It never ran, so it holds no work: a workspace's down needs --discard only because it cannot read it.
                ctx.diagnostics.warn("\(name) was created but did not start",
                                     hint: "fix the cause, then 'so up \(req.stack) --name \(name)' again, "
                                         + "or 'so down \(name)\(isWorkspace ? " --discard" : "")'")
            }
            throw error
        }
        return UpResult(name: name, namespace: name, directory: dir, created: created, ready: req.wait, workspace: isWorkspace, source: source, note: plan.note)
    }

    /// Bundles the checkout, waits for the workspace's container, and streams the bundle in; the size
    /// carried (0 when the workspace already held its checkout, which is kept).
    static func carryIn(_ ctx: SoContext, _ carry: CarryIn, _ source: WorkspaceSource, name: String, dir: String, req: UpRequest,
            checkFirst: Bool) async throws -> UInt64 {
        let w = try await WorkspaceContainer.running(ctx, directory: dir, cluster: req.cluster, timeout: req.timeout)
        if checkFirst, try await w.hasCheckout() {
            ctx.say("\(name) already holds its checkout; keeping it (nothing carried in)")
            return 0
        }
        let bundle = try await carry.bundle(source, workspace: name)
        defer { carry.done(bundle) }
        try await w.deliver(bundle, ref: source.branch)
        return bundle.bytes
    }

    /// `so up --agent NAME`: the spec's `workspace.agent`, checked against the stack's table.
    func setAgent(_ agent: String, specPath: String) throws {
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath), file: specPath)
        try spec.set(["workspace", "agent"], .string(agent))
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
                (try? defaults.entries("'spec-defaults'"))?.contains(where: { $0.key == "workspace" }) == true else { return [] }
        // No git, or no identity set: the agent commits as the image's default user, as without this.
        guard let r = try? await ctx.processes.run(["git"] + (repository.map { ["-C", $0] } ?? []) + ["config", "--get-regexp", "^user\\.(name|email)$"],
                workingDirectory: nil, environment: nil, timeout: 10),
              r.exitCode == 0 else { return [] }
        var out: [String] = []
        for line in r.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].trimmedSpaces.isEmpty else { continue }
            if parts[0] == "user.name" && !given.contains("GIT_USER_NAME") { out.append("GIT_USER_NAME=\(parts[1].trimmedSpaces)") }
            if parts[0] == "user.email" && !given.contains("GIT_USER_EMAIL") { out.append("GIT_USER_EMAIL=\(parts[1].trimmedSpaces)") }
        }
        return out
    }

    /// `up --dry-run`: an existing workspace is planned as it is; a new one is made in a temporary directory
    /// (removed at the end) so the API server can judge exactly what `up` would apply.
    func dryRun(_ req: UpRequest, stack: ResolvedStack, name: String, dir: String, plan source: WorkspacePlan) async throws -> UpResult {
        var plan: [PlannedChange] = []
        if let s = source.source { for line in s.lines(planned: true) { ctx.console.out(line) } }
        if let note = source.note { ctx.console.out(note) }
        if ctx.fs.isDirectory(dir) {
            plan = try await StartAction(ctx).run(StartRequest(directory: dir, cluster: req.cluster, ttl: req.ttl, dryRun: true)).plan
            return UpResult(name: name, namespace: name, directory: dir, created: false, ready: false, plan: plan, source: source.source, note: source.note)
        }
        let scratch = try ctx.fs.temporaryDirectory(beside: Path.join(ctx.temporaryRoot, "so-up"),
                prefix: "so-up-dry-run")
        // best effort: a scratch dir in the temp dir, nothing in it is kept
        defer { try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-up-dry-run")) }
        var quiet = ctx
        quiet.options.quiet = true
        let specPath = Path.join(scratch, "spec.yml"), draft = Path.join(scratch, name)
        var initReq = InitRequest(stack: req.stack, config: ["WORKSPACE_NAME=\(name)"] + (try await gitIdentity(req, stack: stack,
                in: source.source?.repository)) + source.config + req.config,
                                  output: specPath, force: true, with: req.with)
        initReq.deployTo = "k8s-kind"
        initReq.resolved = stack
        try await InitAction(quiet).run(initReq)
        try setNamespace(name, specPath: specPath)
        if let agent = req.agent { try setAgent(agent, specPath: specPath) }
        var createReq = CreateRequest(specFile: specPath, deploymentDir: draft)
        createReq.resolved = stack
        _ = try await CreateAction(quiet).run(createReq)
        if let port = req.preview { try UpAction(quiet).addPreview(dir: draft, host: "\(name).localhost", port: port) }
        ctx.console.out("would create deployment directory \(dir)")
        plan = try await StartAction(ctx).run(StartRequest(directory: draft, cluster: req.cluster, ttl: req.ttl, dryRun: true)).plan
        return UpResult(name: name, namespace: name, directory: dir, created: true, ready: false, plan: plan, source: source.source, note: source.note)
    }

    /// Routes `<name>.localhost` to the service that exposes `port` (an http-proxy entry in D/spec.yml).
    func addPreview(dir: String, host: String, port: Int) throws {
        let model = try DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: ctx.diagnostics)
        let services = try Renderer.ports(of: model).services.filter { !$0.isInitContainer }
        guard let svc = services.first(where: { s in s.listens.contains { $0.number == port } }) else {
            throw SoError("no service of \(model.stackName) exposes port \(port) for --preview",
                          hint: "ports it exposes: " + services.flatMap { s in s.listens.map { "\(s.name):\($0)" } }.joined(separator: ", "))
        }
        let specPath = Path.join(dir, "spec.yml")
        var spec = try YAMLDocument(text: try ctx.fs.readText(specPath), file: specPath)
        let route: YValue = .map([("host-name", .string(host)),
                                  ("routes", .list([.map([("path", .string("/")), ("proxy-to", .string("\(svc.name):\(port)"))])]))])
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

/// What `so up` of a workspace stack starts from: a checkout here (no `GIT_REPO`), carried in as a bundle,
/// and the config that tells the clone to wait for it.
struct WorkspacePlan {
    var source: WorkspaceSource?
    var carry: CarryIn?
    var config: [String] = []
    var note: String?

    static func make(_ ctx: SoContext, _ req: UpRequest, stack: ResolvedStack, name: String, existing: Bool) async throws -> WorkspacePlan {
        // spec-defaults is a mapping: StackFile.load checked it (`entries` cannot fail here).
        let defaults = (try? stack.file.specDefaults?.entries("'spec-defaults'")) ?? []
        let isWorkspace = defaults.contains { $0.key == "workspace" }
        guard isWorkspace else {
            if req.from != nil || req.includeUncommitted || req.agent != nil {
                throw SoError.usage("\(req.stack) is not a workspace stack: --from, --include-uncommitted and --agent apply to workspaces",
                                    hint: "use them with agent-workspace, or a stack whose spec-defaults have workspace:")
            }
            return WorkspacePlan()
        }
        if let agent = req.agent, !existing, !stack.file.agents.contains(where: { $0.name == agent }) {
            throw SoError.usage("unknown agent '\(agent)' for \(req.stack)",
                                hint: stack.file.agents.isEmpty ? "the stack has no agents: table; add one to its stack.yml"
                                    : "known: \(stack.file.agents.map(\.name).joined(separator: ", ")); "
                                        + "another one goes under agents: in the stack or a spec (task, secret-env, egress)")
        }
        let given = Set(req.config.compactMap { $0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) })
        if given.contains("GIT_REPO") {
            if req.from != nil || req.includeUncommitted {
                throw SoError.usage("--from and --include-uncommitted carry a local checkout, and GIT_REPO names a remote to clone", hint: "give one of them")
            }
            return WorkspacePlan()
        }
        let config: [(key: String, keyNode: YNode, value: YNode)]
        do {
            config = try stack.file.specDefaults?.mapping("'spec-defaults'").nonNull("config")?.entries("'config'") ?? []
        } catch {
            ctx.diagnostics.warn("cannot read spec-defaults config of stack \(stack.name): \(SoContext.oneLine(error)); GIT_CARRY taken as unset",
                                 hint: "make spec-defaults.config a mapping of names to values")
            config = []
        }
        let carries = config.contains { $0.key == "GIT_CARRY" }
        if existing {
            // Carried again only when its first start never got the checkout in.
            let dir = try ctx.namedDeployment(name)
            let env: [(key: String, value: String)]
            do {
                env = try ConfigEnv.load(Path.join(dir, "config.env"), fs: ctx.fs)
            } catch {
                ctx.diagnostics.warn("cannot read config.env of workspace \(name): \(SoContext.oneLine(error)); its checkout is not carried again",
                                     hint: "fix \(Path.join(dir, "config.env")), then run so up again")
                env = []
            }
            guard carries, env.contains(where: { $0.key == "GIT_CARRY" && !$0.value.isEmpty }) else { return WorkspacePlan() }
        } else if !carries {
            if req.from != nil || req.includeUncommitted {
                throw SoError.usage("\(req.stack) cannot carry a local checkout in (its spec-defaults config has no GIT_CARRY)",
                        hint: "start it from a remote: --config GIT_REPO=URL")
            }
            return WorkspacePlan()
        }
        let start = req.from.map(ctx.absolute) ?? ctx.fs.currentDirectory
        guard let carry = try await CarryIn.find(ctx, directory: start) else {
            if req.from != nil { throw SoError.usage("\(start) is not in a git checkout", hint: "--from names the checkout to start the workspace from") }
            if req.includeUncommitted { throw SoError.usage("--include-uncommitted needs a git checkout, and \(start) is in none",
                    hint: "run so up in your checkout, or pass --from DIR") }
            let note = "\(start) is not in a git checkout and GIT_REPO is not set: "
                + "/workspace starts empty (run so up in your checkout, pass --from DIR, or --config GIT_REPO=URL)"
            return WorkspacePlan(note: existing ? nil : note)
        }
        let source = try await carry.inspect(includeUncommitted: req.includeUncommitted)
        return WorkspacePlan(source: source, carry: carry, config: ["GIT_CARRY=bundle", "GIT_ORIGIN=\(source.origin)"])
    }
}

public struct DownRequest: Sendable {
    public var name: String
    public var timeout: Double = 120
    public var cluster = ClusterOptions(performClusterManagement: false)
    /// List what would be removed; remove nothing.
    public var dryRun = false
    /// Remove a workspace even when its checkout holds work that is not pushed or fetched.
    public var discard = false
    /// What to do with a workspace's work first: keep its branch in the local repository, merge it, or
    /// discard it. Nil: asked on a terminal when there is work; refused without one.
    public var choice: DownChoice?
    /// The local repository for keep and merge (default: the one the current directory is in).
    public var into: String?
    public init(name: String) { self.name = name }
}

extension DownAction {
    /// A workspace's work before it goes: `--keep`/`--merge` take it into the local repository; without a
    /// choice, a terminal is asked when there is work. Returns whether what remains may be discarded.
    func settle(_ req: DownRequest, dir: String) async throws -> Bool {
        if req.discard || req.choice == .discard { return true }
        guard ctx.isWorkspace(dir) else { return false }
        var choice = req.choice
        if req.dryRun {
            if let choice { ctx.console.out("would \(choice.rawValue) \(req.name)'s work into the local repository first") }
            return false
        }
        let w = try await WorkspaceContainer.open(ctx, directory: dir, cluster: req.cluster)
        guard w.pod != nil else {
            if let choice { throw SoError("cannot \(choice.rawValue) \(req.name)'s work: its \(w.spec.service) container is not running",
                    hint: "start it (so deployment --name \(req.name) start), then down again") }
            return false
        }
        if choice == nil {
            let s = try await w.state()
            guard let losses = s.losses, s.problem == nil else { return false }
            let question = "\(req.name) holds \(losses).\n"
                + "keep its branch in your repository, merge it, or discard it? [k]eep/[m]erge/[d]iscard/[C]ancel: "
            guard let answer = ctx.console.ask(question) else { return false }
            switch answer.trimmedSpaces.lowercased() {
            case "k", "keep": choice = .keep
            case "m", "merge": choice = .merge
            case "d", "discard": return true
            default: throw SoError("\(req.name) was not removed", hint: "so down \(req.name) --keep, --merge or --discard says what to do with its work")
            }
        }
        guard let choice else { return false }
        try await WorkspaceReturnAction(ctx).endWith(choice, w, into: req.into)
        return false
    }
}

/// `so down NAME`: stop with volumes and namespace, then remove the directory `so up` made. A
/// deployment already gone is not an error; one whose directory is gone is found by its namespace.
public struct DownAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    @discardableResult
    public func run(_ req: DownRequest) async throws -> Bool {
        let dir = try ctx.namedDeployment(req.name)
        // Refused before anything is deleted, on the cluster or here (a directory that is a symlink to elsewhere).
        try ctx.checkDeploymentDirectory(dir, namespace: req.name)
        if ctx.fs.isFile(Path.join(dir, "deployment.yml")) {
            let discard = try await settle(req, dir: dir)
            try await WorkGuard(ctx: ctx, directory: dir, cluster: req.cluster, address: "--name \(req.name)", anyway: "so down \(req.name) --discard")
                .check(discard: discard, dryRun: req.dryRun)
            // Checked above: stop's own check would read the checkout again.
            try await StopAction(ctx).run(StopRequest(directory: dir, cluster: req.cluster, deleteVolumes: true, deleteNamespace: true, timeout: req.timeout,
                                                      dryRun: req.dryRun, discard: true))
            if req.dryRun {
                ctx.console.out("would remove directory \(dir)")
                return true
            }
            try ctx.removeDeploymentDirectory(dir, namespace: req.name)
            ctx.say("removed \(req.name)")
            return true
        }
        if let choice = req.choice, choice == .keep || choice == .merge {
            throw SoError("\(req.name) has no deployment directory here, so its work cannot be read to --\(choice.rawValue) it",
                    hint: "'so down \(req.name) --discard' removes what is left on the cluster")
        }
        let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
        let client = try ctx.connect(target.connection)
        let found = try await ListAction(ctx).list(client).filter { $0.namespace == req.name || $0.name == req.name }
        if req.dryRun {
            for d in found { ctx.console.out("would delete Namespace \(d.namespace) (deployment \(d.name)) and its volumes") }
            if ctx.fs.isDirectory(dir) { ctx.console.out("would remove directory \(dir)") }
            return !found.isEmpty
        }
        if found.isEmpty {
            if ctx.fs.exists(dir) { try ctx.removeDeploymentDirectory(dir, namespace: req.name) }
            ctx.say("\(req.name) does not exist; nothing to do")
            return false
        }
        try await Remover(ctx: ctx, client: client).remove(found, wait: true, timeout: req.timeout)
        if ctx.fs.exists(dir) { try ctx.removeDeploymentDirectory(dir, namespace: req.name) }
        ctx.say("removed \(req.name)")
        return true
    }
}
