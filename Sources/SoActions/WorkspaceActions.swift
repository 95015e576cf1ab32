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
        let selector = "app.kubernetes.io/managed-by=so"
        let namespaces = try await client.list(try ResourceType.of(apiVersion: "v1", kind: "Namespace"), namespace: nil, labelSelector: selector)
        let deployments = try await client.list(try ResourceType.of(apiVersion: "apps/v1", kind: "Deployment"), namespace: nil, labelSelector: selector)
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
                name: Path.basename(dir), stack: labels["app.kubernetes.io/stack"]?.string ?? "", namespace: ns.name,
                id: labels["app.kubernetes.io/instance"]?.string ?? labels["app"]?.string ?? ns.name, directory: dir,
                host: a["so.dev/host"] ?? "", createdAt: ns.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse),
                expiresAt: a["so.dev/expires-at"].flatMap(Timestamps.parse), readyDeployments: counts.ready, deployments: counts.total,
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
            throw SoError.usage("cleanup needs a reason to remove deployments", hint: "pass --expired, --orphaned and/or --older-than DURATION (add --dry-run to see the list first)")
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
            if chosen.isEmpty { ctx.say("nothing to clean up (\(all.count) deployment\(all.count == 1 ? "" : "s") checked)") }
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
        let nsType = try ResourceType.of(apiVersion: "v1", kind: "Namespace")
        let pvType = try ResourceType.of(apiVersion: "v1", kind: "PersistentVolume")
        for d in deployments {
            _ = try await client.delete(nsType, name: d.namespace, namespace: nil, propagation: .background)
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
}

/// `so up STACK`: deploy init + create + start in one step, into `$SO_HOME/deployments/NAME` with the
/// namespace NAME. An existing NAME is started again as it is.
public struct UpAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    static let reservedNamespaces: Set<String> = ["default", "kube-system", "kube-public", "kube-node-lease", "caddy-system", "local-path-storage"]

    public func run(_ req: UpRequest) async throws -> UpResult {
        let name = req.name ?? "\(KubeNames.label(Path.basename(req.stack)).prefix(40))-\(ctx.entropy.bytes(2).map { String(format: "%02x", $0) }.joined())"
        guard Names.isDNSLabel(name), name.count <= 40 else {
            throw SoError.usage("name '\(name)' is not usable as a namespace", hint: "use at most 40 lowercase letters, digits and '-', starting with a letter")
        }
        if Self.reservedNamespaces.contains(name) || name.hasPrefix("kube-") {
            throw SoError.usage("name '\(name)' is a system namespace", hint: "choose another --name")
        }
        let dir = try ctx.namedDeployment(name)
        if req.dryRun { return try await dryRun(req, name: name, dir: dir) }
        var created = false
        if ctx.fs.isDirectory(dir) {
            if !req.config.isEmpty || req.with != nil {
                ctx.diagnostics.warn("\(name) already exists; --config and --with are not applied to it",
                                     hint: "edit \(Path.join(dir, "spec.yml")) and run 'so deployment --name \(name) restart', or 'so down \(name)' first")
            }
            ctx.say("\(name) exists; starting it again")
        } else {
            try ctx.fs.createDirectory(Path.dirname(dir))
            let specPath = dir + ".spec-\(getpid()).yml"
            defer { try? ctx.fs.remove(specPath) }
            var quiet = ctx
            quiet.options.quiet = true
            var initReq = InitRequest(stack: req.stack, config: ["WORKSPACE_NAME=\(name)"] + (try await gitIdentity(req)) + req.config, output: specPath, force: true, with: req.with)
            initReq.deployTo = "k8s-kind"
            try await InitAction(quiet).run(initReq)
            try setNamespace(name, specPath: specPath)
            _ = try await CreateAction(quiet).run(CreateRequest(specFile: specPath, deploymentDir: dir))
            if let port = req.preview { try addPreview(dir: dir, host: "\(name).localhost", port: port) }
            created = true
        }
        let isWorkspace = ctx.isWorkspace(dir)
        do {
            try await StartAction(ctx).run(StartRequest(directory: dir, cluster: req.cluster, wait: req.wait, timeout: req.timeout, progress: req.progress, ttl: req.ttl))
        } catch {
            if created {
                // It never ran, so it holds no work: a workspace's down needs --discard only because it cannot read it.
                ctx.diagnostics.warn("\(name) was created but did not start",
                                     hint: "fix the cause, then 'so up \(req.stack) --name \(name)' again, or 'so down \(name)\(isWorkspace ? " --discard" : "")'")
            }
            throw error
        }
        return UpResult(name: name, namespace: name, directory: dir, created: created, ready: req.wait, workspace: isWorkspace)
    }

    /// For a workspace stack (spec-defaults `workspace:`), the agent's commits are by the invoking user's
    /// `git config user.name/email` unless `--config GIT_USER_NAME=…/GIT_USER_EMAIL=…` says otherwise
    /// (the stack's compose falls back to a clear default when neither is set).
    func gitIdentity(_ req: UpRequest) async throws -> [String] {
        let given = Set(req.config.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        guard !given.contains("GIT_USER_NAME") || !given.contains("GIT_USER_EMAIL") else { return [] }
        let stack = try ctx.locator.resolve(req.stack, diagnostics: DiagnosticSink())
        guard let defaults = stack.file.specDefaults, (try? defaults.entries("'spec-defaults'"))?.contains(where: { $0.key == "workspace" }) == true else { return [] }
        guard let r = try? await ctx.processes.run(["git", "config", "--get-regexp", "^user\\.(name|email)$"], workingDirectory: nil, environment: nil, timeout: 10),
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
    func dryRun(_ req: UpRequest, name: String, dir: String) async throws -> UpResult {
        var plan: [PlannedChange] = []
        if ctx.fs.isDirectory(dir) {
            plan = try await PlanAction(ctx).run(directory: dir, cluster: req.cluster)
            return UpResult(name: name, namespace: name, directory: dir, created: false, ready: false, plan: plan)
        }
        let scratch = try ctx.fs.temporaryDirectory(beside: Path.join(ctx.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp", "so-up"), prefix: "so-up-dry-run")
        defer { try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-up-dry-run")) }
        var quiet = ctx
        quiet.options.quiet = true
        let specPath = Path.join(scratch, "spec.yml"), draft = Path.join(scratch, name)
        var initReq = InitRequest(stack: req.stack, config: ["WORKSPACE_NAME=\(name)"] + (try await gitIdentity(req)) + req.config, output: specPath, force: true, with: req.with)
        initReq.deployTo = "k8s-kind"
        try await InitAction(quiet).run(initReq)
        try setNamespace(name, specPath: specPath)
        _ = try await CreateAction(quiet).run(CreateRequest(specFile: specPath, deploymentDir: draft))
        if let port = req.preview { try UpAction(quiet).addPreview(dir: draft, host: "\(name).localhost", port: port) }
        ctx.console.out("would create deployment directory \(dir)")
        plan = try await PlanAction(ctx).run(directory: draft, cluster: req.cluster)
        return UpResult(name: name, namespace: name, directory: dir, created: true, ready: false, plan: plan)
    }

    /// Routes `<name>.localhost` to the service that exposes `port` (an http-proxy entry in D/spec.yml).
    func addPreview(dir: String, host: String, port: Int) throws {
        let model = try DeploymentLoader.load(dir, fs: ctx.fs, diagnostics: DiagnosticSink())
        let services = PortPlan(model).services.filter { !$0.isInitContainer }
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

public struct DownRequest: Sendable {
    public var name: String
    public var timeout: Double = 120
    public var cluster = ClusterOptions(performClusterManagement: false)
    /// List what would be removed; remove nothing.
    public var dryRun = false
    /// Remove a workspace even when its checkout holds work that is not pushed or fetched.
    public var discard = false
    public init(name: String) { self.name = name }
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
            try await WorkGuard(ctx: ctx, directory: dir, cluster: req.cluster, address: "--name \(req.name)", anyway: "so down \(req.name) --discard")
                .check(discard: req.discard, dryRun: req.dryRun)
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
