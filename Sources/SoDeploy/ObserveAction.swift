import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// `ps`, `status`, `logs`, `exec` and `restart` of a deployment directory.
public struct ObserveAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func ps(_ directory: String, cluster: ClusterOptions) async throws -> [PodInfo] {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        let now = ctx.clock.now()
        return try await c.pods().map { Self.podInfo($0, now: now) }
    }

    public static func podInfo(_ p: JSON, now: Date? = nil) -> PodInfo {
        let statuses = p.at("status", "containerStatuses")?.array ?? []
        let containers = p.at("spec", "containers")?.array ?? []
        let podReady = (p.at("status", "conditions")?.array ?? []).contains {
            $0["type"]?.string == "Ready" && $0["status"]?.string == "True"
        }
        let ready =
            statuses.isEmpty ? (podReady ? containers.count : 0) : statuses.filter { $0["ready"]?.bool == true }.count
        var phase = p.at("status", "phase")?.string ?? "Unknown"
        // As kubectl's STATUS: the kubelet's reason for a pod it ended (Evicted, OutOfcpu, NodeAffinity).
        if let reason = p.at("status", "reason")?.string, !reason.isEmpty { phase = reason }
        if p.at("metadata", "deletionTimestamp") != nil { phase = "Terminating" }
        for s in statuses { if let r = s.at("state", "waiting", "reason")?.string { phase = r } }
        let ports = containers.flatMap { c in
            (c["ports"]?.array ?? []).compactMap { $0["containerPort"]?.int }.map {
                "\(c["name"]?.string ?? "?"):\($0)"
            }
        }
        let created = p.at("metadata", "creationTimestamp")?.string.flatMap(Timestamps.parse)
        var age: Int?
        if let created, let now { age = max(0, Int(now.timeIntervalSince(created))) }
        return PodInfo(
            name: p.name, component: p.labels[DeploymentNames.Label.component] ?? "", phase: phase,
            ready: "\(ready)/\(containers.count)",
            restarts: statuses.compactMap { $0["restartCount"]?.int }.reduce(0, +),
            ip: p.at("status", "podIP")?.string ?? "",
            node: p.at("spec", "nodeName")?.string ?? "", ageSeconds: age,
            containers: containers.compactMap { $0["name"]?.string }, ports: ports)
    }

    public func status(_ directory: String, cluster: ClusterOptions) async throws -> DeploymentStatus {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        return try await status(
            c.client, namespace: c.namespace, id: c.model.id,
            cluster: c.target.kindCluster.map { "kind:\($0)" } ?? c.target.connection.contextName,
            pods: try await c.pods())
    }

    /// The status of the deployment `id` in `namespace` from the cluster alone (what `so dashboard` shows of a
    /// deployment whose directory it may not have), given its pods.
    public func status(_ client: ClusterClient, namespace: String, id: String, cluster: String, pods listedPods: [JSON])
        async throws -> DeploymentStatus
    {
        var workloads: [DeploymentStatus.Workload] = []
        let now = ctx.clock.now()
        for d in try await client.list(
            .deployment, namespace: namespace,
            labelSelector: DeploymentNames.selector(id))
        {
            let pending = Waiter.deploymentPending(d) ?? Waiter.podsEnding(d, pods: listedPods)
            let want = d.at("spec", "replicas")?.int ?? 1
            workloads.append(
                .init(
                    kind: ResourceType.deployment.kind, name: d.name, state: pending ?? "\(want)/\(want) available",
                    ready: pending == nil))
        }
        for j in try await client.list(
            .job, namespace: namespace,
            labelSelector: DeploymentNames.selector(id))
        {
            let complete = Waiter.jobCondition(j, "Complete")
            let failed = Waiter.jobCondition(j, "Failed") || (j.at("status", "failed")?.int ?? 0) >= 1
            workloads.append(
                .init(
                    kind: ResourceType.job.kind, name: j.name,
                    state: complete ? "complete" : failed ? "failed" : "running", ready: complete))
        }
        var hosts: [String] = []
        var certificates: [DeploymentStatus.Certificate] = []
        for i in try await client.list(
            .ingress, namespace: namespace,
            labelSelector: DeploymentNames.selector(id))
        {
            for r in i.at("spec", "rules")?.array ?? [] { if let h = r["host"]?.string { hosts.append(h) } }
            let issuer = IngressTLS.issuer(annotations: i.annotations)
            for t in i.at("spec", "tls")?.array ?? [] {
                guard let secret = t["secretName"]?.string else { continue }
                let present = try await client.get(.secret, name: secret, namespace: namespace) != nil
                for h in t["hosts"]?.array.compactMap(\.string) ?? [] {
                    certificates.append(.init(host: h, secret: secret, present: present, issuer: issuer))
                }
            }
        }
        let pods = listedPods.map { Self.podInfo($0, now: now) }
        let events = try await client.list(.event, namespace: namespace, labelSelector: nil)
            .filter { $0["type"]?.string == "Warning" }
            .sorted {
                ($0["lastTimestamp"]?.string ?? $0["eventTime"]?.string ?? "")
                    > ($1["lastTimestamp"]?.string ?? $1["eventTime"]?.string ?? "")
            }
            .prefix(10)
            .map { e -> String in
                let object =
                    "\(e.at("involvedObject", "kind")?.string ?? "?")/\(e.at("involvedObject", "name")?.string ?? "?")"
                let message = (e["message"]?.string ?? "").replacingOccurrences(of: "\n", with: " ")
                return "\(object) \(e["reason"]?.string ?? ""): \(message)"
            }
        var problems: [String] = []
        let volumes = VolumeNodeCheck(client: client, namespace: namespace, now: ctx.clock.now())
        for pod in listedPods where pod.at("status", "phase")?.string == "Pending" {
            if let held = try await volumes.why(pod) {
                problems.append("pod \(pod.name) \(held.state.fatal ? "cannot run" : "waits"): \(held.message)")
            }
        }
        var status = DeploymentStatus(
            deployment: id, namespace: namespace,
            cluster: cluster,
            workloads: workloads, ingressHosts: hosts, certificates: certificates, pods: pods, warnings: Array(events),
            ready: !workloads.isEmpty && workloads.allSatisfy(\.ready))
        status.problems = problems
        return status
    }

    public struct LogsRequest: Sendable {
        public var directory: String
        public var cluster: ClusterOptions
        public var services: [String]
        public var tail: Int?
        public var follow: Bool
        public var sinceSeconds: Int?
        public var timestamps = false
        public init(
            directory: String, cluster: ClusterOptions = ClusterOptions(), services: [String] = [], tail: Int? = nil,
            follow: Bool = false,
            sinceSeconds: Int? = nil, timestamps: Bool = false
        ) {
            self.timestamps = timestamps
            self.directory = directory
            self.cluster = cluster
            self.services = services
            self.tail = tail
            self.follow = follow
            self.sinceSeconds = sinceSeconds
        }
    }

    /// Logs of every container of every pod (or of the named services), each line prefixed with its source.
    public func logs(_ req: LogsRequest) async throws {
        let c = try await ConnectedDeployment.open(ctx, directory: req.directory, cluster: req.cluster)
        let pods = try await c.pods()
        let wanted = Set(req.services.map { NameRules.dnsLabel($0) })
        var sources: [(pod: String, container: String)] = []
        for p in pods {
            for container in ((p.at("spec", "initContainers")?.array ?? []) + (p.at("spec", "containers")?.array ?? []))
                .compactMap({ $0["name"]?.string })
            where wanted.isEmpty || wanted.contains(container) {
                sources.append((p.name, container))
            }
        }
        if sources.isEmpty {
            throw SoError(
                pods.isEmpty
                    ? "no pods are running for \(c.model.id)"
                    : "no container named \(req.services.joined(separator: ", "))",
                hint: pods.isEmpty
                    ? "start the deployment first: so deployment --dir D start"
                    : "services: " + Set(pods.flatMap { Self.podInfo($0).containers }).sorted().joined(separator: ", "))
        }
        let multiPod = Set(sources.map(\.pod)).count > 1
        let options = { (container: String) in
            LogOptions(
                container: container, follow: req.follow, tailLines: req.tail, sinceSeconds: req.sinceSeconds,
                timestamps: req.timestamps)
        }
        let console = ctx.console
        try await withThrowingTaskGroup(of: Void.self) { group in
            for s in sources {
                let prefix = multiPod ? "\(s.pod)/\(s.container) | " : "\(s.container) | "
                let stream = c.client.logs(namespace: c.namespace, pod: s.pod, options: options(s.container))
                let job: @Sendable () async throws -> Void = {
                    var pending = ""
                    for try await chunk in stream {
                        pending += chunk
                        while let nl = pending.firstIndex(of: "\n") {
                            console.out(prefix + pending[..<nl])
                            pending = String(pending[pending.index(after: nl)...])
                        }
                    }
                    if !pending.isEmpty { console.out(prefix + pending) }
                }
                if req.follow { group.addTask(operation: job) } else { try await job() }
            }
            try await group.waitForAll()
        }
    }

    /// An interactive shell in a service's container (default: the first pod's first service), in
    /// /workspace when it exists; bash when the image has it.
    public func shell(_ directory: String, cluster: ClusterOptions, service: String?) async throws -> Int32 {
        guard let name = try service ?? defaultShellService(directory, cluster: cluster) else {
            throw SoError("the deployment has no services", hint: "check its compose files")
        }
        let script =
            "cd /workspace 2>/dev/null || true; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"
        return try await exec(
            directory, cluster: cluster, service: name, command: ["sh", "-c", script], interactive: true,
            tty: ctx.console.isTerminal)
    }

    /// The service `shell` opens when none is named: the first pod's first service that is not an init container
    /// (a workspace's known container says which it is, with no file of the deployment read).
    func defaultShellService(_ directory: String, cluster: ClusterOptions) throws -> String? {
        if let known = KnownContainer.read(ctx, directory: ctx.absolute(directory), cluster: cluster),
            let shell = known.shell
        {
            return shell
        }
        let model = try DeploymentLoader.load(ctx.absolute(directory), fs: ctx.fs, diagnostics: ctx.diagnostics)
        return Self.shellService(model)
    }

    static func shellService(_ model: DeploymentModel) -> String? {
        model.pods.first?.compose.services.first {
            !$0.labels.contains { $0.0 == "laconic.init-container" && $0.1 == "true" }
        }?.name
    }

    /// Forwards local ports to a service's Service through kubectl (runs until interrupted).
    public func portForward(_ directory: String, cluster: ClusterOptions, service: String, ports: [String]) async throws
        -> Int32
    {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        // The Service carries what render's port plan says the compose service listens on.
        let plan = try Renderer.ports(of: c.model)
        let reachable = plan.services.filter { $0.reach != .none }
        guard let planned = reachable.first(where: { $0.name == service }) else {
            throw SoError(
                "port-forward: no service '\(service)' in the deployment",
                hint: "services: " + reachable.map(\.name).joined(separator: ", "))
        }
        for p in ports {
            guard let forwarded = ForwardedPort(p) else {
                throw SoError("port '\(p)' is not [LOCAL:]REMOTE", hint: "for example 8080:80")
            }
            guard planned.portNumbers.contains(forwarded.remote) else {
                throw SoError(
                    "port-forward: service '\(service)' has no port \(forwarded.remote)", hint: planned.portsHint)
            }
        }
        let args =
            ["kubectl"] + c.target.kubectlFlags + [
                "-n", c.namespace, "port-forward", "service/\(NameRules.serviceName(service))",
            ] + ports
        return try await ctx.processes.runAttached(args, environment: nil)
    }

    /// Rolling restart of the deployment's Deployments (as `kubectl rollout restart`), then a wait.
    /// `templateAnnotations`: more pod-template annotations set by the same patch, by Deployment name.
    public func restart(_ directory: String, cluster: ClusterOptions, wait: Bool, timeout: Double) async throws {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        // Under the deployment's Lease: a start, stop or rotation in progress is waited for, up to --timeout.
        try await c.lock(timeout: timeout).holding(waiting: timeout, progress: ProgressReporter(ctx: ctx, mode: .auto))
        {
            try await restart(c, wait: wait, timeout: timeout)
        }
    }

    /// Rolls the deployment's Deployments (the caller holds its lock); `templateAnnotations` go into their pod
    /// templates beside `restartedAt`.
    func restart(
        _ c: ConnectedDeployment, wait: Bool, timeout: Double, templateAnnotations: [String: [(String, String)]] = [:]
    ) async throws {
        let type = ResourceType.deployment
        let stamp = Timestamps.rfc3339(ctx.clock.now())
        func patch(_ name: String) -> Data {
            let annotations = [("kubectl.kubernetes.io/restartedAt", stamp)] + (templateAnnotations[name] ?? [])
            let value = YValue.map([
                (
                    "spec",
                    .map([
                        (
                            "template",
                            .map([
                                (
                                    "metadata",
                                    .map([
                                        (
                                            "annotations",
                                            .map(annotations.map { ($0.0, .string($0.1)) })
                                        )
                                    ])
                                )
                            ])
                        )
                    ])
                )
            ])
            return Data(value.compactJSON())
        }
        var maintenance = try Maintenance(ctx: ctx, c: c)
        var deployments = try await c.client.list(
            type, namespace: c.namespace, labelSelector: DeploymentNames.selector(c.model.id))
        if let container = maintenance?.container {
            // The maintenance page keeps serving while the rest restarts: its own Deployment is not rolled.
            deployments.removeAll { d in
                (d.at("spec", "template", "spec", "containers")?.array ?? []).contains {
                    $0["name"]?.string == container
                }
            }
            try await maintenance?.divert()
        }
        var names: [String] = []
        for d in deployments {
            _ = try await c.client.patch(type, name: d.name, namespace: c.namespace, mergePatch: patch(d.name))
            names.append(d.name)
        }
        ctx.say("restarting \(names.joined(separator: ", "))")
        // With a maintenance page, the Ingress goes back only once the workloads are ready again.
        if wait || maintenance != nil {
            let objects = names.map { KubeObject(.deployment, name: $0, namespace: c.namespace) }
            try await Waiter(
                ctx: ctx, client: c.client, namespace: c.namespace,
                selector: DeploymentNames.instanceSelector(c.model.id),
                directory: c.model.directory,
                uptime: KubectlUptime(processes: ctx.processes, kubectlFlags: c.target.kubectlFlags)
            )
            .wait(for: objects, timeout: timeout, progress: ProgressReporter(ctx: ctx, mode: .plain))
        }
        try await maintenance?.restore()
    }
}

extension ObserveAction {
    /// Makes new values for generated keys (all, or `keys`), then restarts the workloads.
    public func rotateSecrets(_ directory: String, cluster: ClusterOptions, keys: [String], timeout: Double)
        async throws -> [String]
    {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        let generatedKeys = c.model.generatedKeys
        for k in keys where !generatedKeys.contains(k) {
            throw SoError(
                "\(k) is not a generated secret of this deployment",
                hint: generatedKeys.isEmpty
                    ? "the spec has no $generate values" : "generated keys: \(generatedKeys.joined(separator: ", "))")
        }
        // The read of the stored values, the new Secret and the restart under one hold of the deployment's Lease:
        // a start waits for it and then reads the new values (it never applies the ones it read before).
        return try await c.lock(timeout: timeout).holding(
            waiting: timeout, progress: ProgressReporter(ctx: ctx, mode: .auto)
        ) {
            try await rotate(c, keys: keys, generatedKeys: generatedKeys, timeout: timeout)
        }
    }

    func rotate(_ c: ConnectedDeployment, keys: [String], generatedKeys: [String], timeout: Double) async throws
        -> [String]
    {
        let existing = try await c.client.get(
            .secret, name: DeploymentNames.generatedSecrets(c.model.id),
            namespace: c.namespace)
        // What start would apply (`StartManifest`), the keys rotated made anew: its generated-secrets Secret is applied.
        let manifest = try RenderAction(ctx).render(c.model, warn: false)
        let desired = try StartManifest(ctx: ctx, model: c.model)
            .objects(manifest, stored: existing, ttl: nil, rotate: Set(keys.isEmpty ? generatedKeys : keys))
        // With its revision one up, and the pods that read it told so in the restart's own patch (as start would stamp them).
        let live = try await ConfigRevisions.live(c.client, namespace: c.namespace, deployment: c.model.id)
        let stamped = ConfigRevisions.stamp(desired.objects, live: live)
        for object in stamped
        where object.isKind(.secret) && object.name == DeploymentNames.generatedSecrets(c.model.id) {
            _ = try await c.client.apply(object.stamped, fieldManager: "so", force: true)
        }
        ctx.say("rotated \(desired.madeNow.joined(separator: ", "))")
        var revisions: [String: [(String, String)]] = [:]
        for d in stamped where d.isKind(.deployment) {
            if let v = ConfigRevisions.read(d) { revisions[d.name] = [(ConfigRevisions.podAnnotation, v)] }
        }
        try await restart(c, wait: true, timeout: timeout, templateAnnotations: revisions)
        return desired.madeNow
    }
}
