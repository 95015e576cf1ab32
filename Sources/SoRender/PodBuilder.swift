import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Builds the pod spec of one compose file (a Deployment's or a Job's) and the ConfigMaps, volumes and
/// claims it needs.
struct PodBuilder {
    var state: RenderState
    let component: ComposeComponent
    let isJob: Bool

    var configMaps: [KubeObject] = []
    var persistentVolumes: [KubeObject] = []
    var claims: [KubeObject] = []
    var podVolumes: [(String, YValue)] = []  // name → volume source
    var usesClaims = false

    init(state: RenderState, component: ComposeComponent, isJob: Bool) {
        self.state = state
        self.component = component
        self.isJob = isJob
    }

    var model: DeploymentModel { _read { yield state.model } }
    var spec: Spec { state.spec }
    var id: String { state.id }
    var compose: ComposeFile { component.compose }
    var folder: String { Path.dirname(component.relativePath) }

    func location(_ svc: ComposeService, line: Int? = nil) -> SourceLocation {
        SourceLocation(file: compose.path, line: line ?? svc.line)
    }

    /// The pod spec. Each part is built in a function of its own: the containers' functions sit on the deepest
    /// stack of a render, and a debug build gives each local and temporary of a function its own slot of its frame,
    /// so one long function here once took 14-20 KiB of a thread's stack (issue 67, `StackProbe`).
    mutating func build() throws -> YValue {
        var containers: [YValue] = []
        var initContainers: [YValue] = []
        for svc in compose.services {
            let c = try container(svc)
            if svc.isInitContainer { initContainers.append(c) } else { containers.append(c) }
        }
        return podSpec(containers: containers, initContainers: initContainers)
    }

    /// The pod spec around its containers.
    mutating func podSpec(containers: [YValue], initContainers: [YValue]) -> YValue {
        var pod: [(String, YValue)] = []
        if isJob { pod.append(("restartPolicy", .string("Never"))) }
        pod.append(("automountServiceAccountToken", .bool(false)))
        pod += hostNetworkFields()
        pod.append(("securityContext", podSecurityContext()))
        pod += schedulingFields()
        pod += longTailPodFields()
        let initContainers = waitForDependencies() + initContainers
        if !initContainers.isEmpty { pod.append(("initContainers", .list(initContainers))) }
        pod.append(("containers", .list(containers)))
        if !model.caCertificates.isEmpty {
            podVolumes.append(
                ("ca-certificates", .map([("secret", .map([("secretName", .string("\(id)-ca-certificates"))]))])))
        }
        if !podVolumes.isEmpty {
            pod.append(("volumes", .list(podVolumes.map { .map([("name", .string($0.0))] + ($0.1.pairs ?? [])) })))
        }
        return .map(pod)
    }

    /// The image pull Secret, the runtime class, and where the pod may run: affinity, spread, tolerations.
    func schedulingFields() -> [(String, YValue)] {
        var pod: [(String, YValue)] = []
        if spec.sections.imagePullSecret != nil {
            pod.append(("imagePullSecrets", .list([.map([("name", .string(DeploymentNames.imagePullSecret(id)))])])))
        }
        if let rc = spec.sections.security.runtimeClass
            ?? (spec.sections.security.unlimitedMemlock ? "high-memlock" : nil), !isJob
        {
            pod.append(("runtimeClassName", .string(rc)))
        }
        if let affinity = affinity() { pod.append(("affinity", affinity)) }
        if let spread = spreadConstraints() { pod.append(("topologySpreadConstraints", spread)) }
        if let tolerations = tolerations() { pod.append(("tolerations", tolerations)) }
        return pod
    }

    // MARK: Pod fields

    /// `hostNetwork` and its DNS policy when a service uses `network_mode: host` (with a warning); else none.
    mutating func hostNetworkFields() -> [(String, YValue)] {
        guard compose.services.contains(where: { $0.networkMode == "host" }) else { return [] }
        if let svc = compose.services.first(where: { $0.networkMode == "host" }) {
            state.warnings.append(
                Diagnostic(
                    "service '\(svc.name)' uses network_mode: host: its pod shares the node's network "
                        + "(on kind, the node container's), and its namespace admits privileged pods",
                    hint: "prefer ports: and a Service unless the service must see the host's interfaces",
                    at: location(svc)))
        }
        return [("hostNetwork", .bool(true)), ("dnsPolicy", .string("ClusterFirstWithHostNet"))]
    }

    /// The pod's securityContext: non-root under `restricted`, the runtime's seccomp profile, the services' sysctls.
    func podSecurityContext() -> YValue {
        var podSecurity: [(String, YValue)] = []
        if restricted {
            let uid = spec.sections.security.runAsUser ?? Defaults.restrictedUser
            podSecurity += [
                ("runAsNonRoot", .bool(true)), ("runAsUser", .int(uid)), ("runAsGroup", .int(uid)),
                ("fsGroup", .int(uid)),
            ]
        }
        podSecurity.append(("seccompProfile", .map([("type", .string("RuntimeDefault"))])))
        let sysctls = compose.services.flatMap(\.sysctls)
        if !sysctls.isEmpty {
            podSecurity.append(
                ("sysctls", .list(sysctls.map { .map([("name", .string($0.0)), ("value", .string($0.1))]) })))
        }
        return .map(podSecurity)
    }

    /// The pod's affinity: a node with every label of the spec's node affinities; for a workspace's pod, a node
    /// without another workspace's same pod of its stack if there is one (a pool's members spread, so one lost node does not empty
    /// it); nil without either.
    func affinity() -> YValue? {
        var affinity: [(String, YValue)] = []
        if !spec.sections.nodeAffinities.isEmpty {
            let exprs: [YValue] = spec.sections.nodeAffinities.map {
                .map([("key", .string($0.label)), ("operator", .string("In")), ("values", .list([.string($0.value)]))])
            }
            affinity.append(
                (
                    "nodeAffinity",
                    .map([
                        (
                            "requiredDuringSchedulingIgnoredDuringExecution",
                            .map([("nodeSelectorTerms", .list([.map([("matchExpressions", .list(exprs))])]))])
                        )
                    ])
                ))
        }
        if let w = spec.workspace, !isJob, spec.replicaSpread != .none,
            compose.services.contains(where: { $0.name == w.service })
        {
            let same: [(String, YValue)] = [
                (DeploymentNames.Label.stack, .string(NameRules.labelValue(model.stackName))),
                (DeploymentNames.Label.component, .string(NameRules.labelValue(component.name))),
            ]
            let term: YValue = .map([
                ("labelSelector", .map([("matchLabels", .map(same))])),
                ("namespaceSelector", .map([])),  // every namespace: each workspace has its own
                ("topologyKey", .string(Self.hostnameKey)),
            ])
            affinity.append(
                (
                    "podAntiAffinity",
                    .map([
                        (
                            "preferredDuringSchedulingIgnoredDuringExecution",
                            .list([.map([("weight", .int(100)), ("podAffinityTerm", term)])])
                        )
                    ])
                ))
        }
        return affinity.isEmpty ? nil : .map(affinity)
    }

    static let hostnameKey = "kubernetes.io/hostname"

    /// A Deployment of several replicas spreads them over nodes (`replica-spread:` soft by default: preferred;
    /// hard: required), counting only the pods of its newest template (`pod-template-hash`), so a rollout's
    /// old pods do not skew it; nil for one replica, a Job, or `none`.
    func spreadConstraints() -> YValue? {
        guard !isJob, state.replicas(component) > 1, spec.replicaSpread != .none else { return nil }
        return .list([
            .map([
                ("maxSkew", .int(1)), ("topologyKey", .string(Self.hostnameKey)),
                (
                    "whenUnsatisfiable",
                    .string(spec.replicaSpread == .hard ? "DoNotSchedule" : "ScheduleAnyway")
                ),
                (
                    "labelSelector",
                    .map([("matchLabels", .map(state.selector(component.name).map { ($0.0, .string($0.1)) }))])
                ),
                ("matchLabelKeys", .list([.string("pod-template-hash")])),
            ])
        ])
    }

    /// The pod's tolerations of the spec's node taints (NoSchedule); nil without any.
    func tolerations() -> YValue? {
        guard !spec.sections.nodeTolerations.isEmpty else { return nil }
        return .list(
            spec.sections.nodeTolerations.map { t in
                var m: [(String, YValue)] = [
                    ("key", .string(t.key)), ("operator", .string(t.value == nil ? "Exists" : "Equal")),
                ]
                if let v = t.value { m.append(("value", .string(v))) }
                m.append(("effect", .string("NoSchedule")))
                return .map(m)
            })
    }

    // MARK: Containers

    /// One container, built in parts (see `build()`): the mounts' functions go deepest.
    mutating func container(_ svc: ComposeService) throws -> YValue {
        var c = try containerStart(svc)
        c += environmentFields(svc)
        c += try runtimeFields(svc)
        let mounts = try volumeMounts(svc) + resourceMounts(svc) + memoryMounts(svc)
        if !mounts.isEmpty { c.append(("volumeMounts", .list(mounts))) }
        c.append(("securityContext", try containerSecurity(svc)))
        return .map(c)
    }

    /// The container's name, image and pull policy, and its process: command, args, working directory, stdin, tty.
    func containerStart(_ svc: ComposeService) throws -> [(String, YValue)] {
        let image = try containerImage(svc)
        var c: [(String, YValue)] = [("name", .string(NameRules.dnsLabel(svc.name))), ("image", .string(image))]
        let fallback = model.deployTo == .k8s ? "Always" : "IfNotPresent"
        let policy =
            isJob
            ? fallback : (spec.sections.imagePullPolicy ?? svc.pullPolicy.flatMap(PullPolicy.kubernetes) ?? fallback)
        c.append(("imagePullPolicy", .string(policy)))
        if let e = svc.entrypoint {
            c.append(("command", .list(e.map { .string(ContainerEnvironment.kubeExpand($0)) })))
        }
        if let cmd = svc.command { c.append(("args", .list(cmd.map { .string(ContainerEnvironment.kubeExpand($0)) }))) }
        if let wd = svc.workingDir { c.append(("workingDir", .string(wd))) }
        if svc.stdinOpen == true { c.append(("stdin", .bool(true))) }
        if svc.tty == true { c.append(("tty", .bool(true))) }
        return c
    }

    /// The service's image (a built one's local name), the spec's override of it, and on `k8s` a `:local` image
    /// as pushed to the spec's registry.
    func containerImage(_ svc: ComposeService) throws -> String {
        guard
            var image = svc.image ?? svc.build.map({ _ in LocalImage.name(stack: model.stackName, service: svc.name) })
        else {
            throw SoError(
                "service '\(svc.name)' has no image",
                hint: "add 'image:' (services with only build: get an image name from 'so build-containers')",
                at: location(svc))
        }
        if SecretMarker.contains(image) {
            throw SoError(
                "service '\(svc.name)' image refers to a generated secret", hint: "images cannot hold secrets",
                at: location(svc))
        }
        if let o = spec.sections.imageOverrides.first(where: { $0.container == svc.name }) { image = o.image }
        if model.deployTo == .k8s, let reg = spec.imageRegistry, image.hasSuffix(":local") {
            let base =
                image.dropLast(":local".count).split(separator: "/").last.map(String.init) ?? String(image.dropLast(6))
            image = "\(reg)/\(base):deploy-\(id.suffix(8))"
        }
        return image
    }

    /// `env`, and `envFrom`: the generated Secret and the spec's secrets.
    mutating func environmentFields(_ svc: ComposeService) -> [(String, YValue)] {
        var c: [(String, YValue)] = []
        let env = environment(svc)
        if !env.isEmpty { c.append(("env", .list(env))) }
        var envFrom: [YValue] = []
        if state.hasGeneratedSecret {
            envFrom.append(
                .map([("secretRef", .map([("name", .string(state.generatedSecretName)), ("optional", .bool(true))]))]))
        }
        for s in spec.secrets {
            envFrom.append(.map([("secretRef", .map([("name", .string(s)), ("optional", .bool(true))]))]))
        }
        if !envFrom.isEmpty { c.append(("envFrom", .list(envFrom))) }
        return c
    }

    /// Ports, resources, and but for an init container the readiness probe and the lifecycle hooks.
    func runtimeFields(_ svc: ComposeService) throws -> [(String, YValue)] {
        var c: [(String, YValue)] = []
        let ports = containerPorts(svc)
        if !ports.isEmpty { c.append(("ports", .list(ports))) }
        let resources = try self.resources(svc)
        c.append(("resources", resources))
        if !svc.isInitContainer, let probe = try readinessProbe(svc) { c.append(("readinessProbe", probe)) }
        if !svc.isInitContainer, let lifecycle = lifecycle(svc) { c.append(("lifecycle", lifecycle)) }
        return c
    }

    /// The lifecycle hooks: Kubernetes runs one hook of each kind per container, the first compose hook; nil without.
    func lifecycle(_ svc: ComposeService) -> YValue? {
        var lifecycle: [(String, YValue)] = []
        for (key, hooks) in [("postStart", svc.postStart), ("preStop", svc.preStop)] {
            if let h = hooks.first {
                lifecycle.append((key, .map([("exec", .map([("command", .list(h.command.map { .string($0) }))]))])))
            }
        }
        return lifecycle.isEmpty ? nil : .map(lifecycle)
    }

    /// The container's securityContext, under `restricted` or not.
    mutating func containerSecurity(_ svc: ComposeService) throws -> YValue {
        restricted ? try restrictedContext(svc) : securityContext(svc)
    }

    /// The container's `env`: the service's environment, the spec's config, the credentials files' keys from the
    /// Secret, the CA certificates' variable, the egress proxy's settings (see `ContainerEnvironment`).
    mutating func environment(_ svc: ComposeService) -> [YValue] {
        var env = ContainerEnvironment(
            siblings: compose.services.map(\.name).filter { $0 != svc.name }, secretName: state.generatedSecretName)
        composeEnvironment(svc, into: &env)
        // laconic-so injects every config.env entry into every container; config wins over compose text.
        for e in model.config { env.add(e.key, raw: e.value) }
        // Credentials files were config.env entries in laconic-so (config wins over compose): their keys
        // come from the Secret even where compose gives the variable a value.
        for f in model.credentialsFiles { for k in f.keys where env.has(k) { env.set(k, env.secretKeyRef(k)) } }
        if !model.caCertificates.isEmpty {
            env.set("NODE_EXTRA_CA_CERTS", .string("/etc/ssl/certs/laconic-extra-ca-0.pem"))
        }
        // spec egress-proxy: the proxy's allowlist; the other containers' HTTP(S) through it, unless they set their own.
        if let proxy = state.proxy {
            let settings = svc.name == proxy.service ? proxy.settings : proxy.clientSettings
            for (k, v) in settings where svc.name == proxy.service || !env.has(k) { env.set(k, .string(v)) }
        }
        return env.list()
    }

    /// The service's own environment; a variable without a value comes from the generated Secret, else from the
    /// spec's config (added after), else it is left out with a warning.
    mutating func composeEnvironment(_ svc: ComposeService, into env: inout ContainerEnvironment) {
        let configKeys = Set(model.config.map(\.key))
        for e in svc.environment {
            if let v = e.value {
                env.add(e.key, raw: v)
            } else if model.secretKeys.contains(e.key) {
                env.set(e.key, env.secretKeyRef(e.key))
            } else if !configKeys.contains(e.key) {
                state.warnings.append(
                    Diagnostic(
                        "environment '\(e.key)' has no value and no config entry; it is left out",
                        hint: "give it a value in the spec's config:", at: location(svc, line: e.line)))
            }
        }
    }

    func containerPorts(_ svc: ComposeService) -> [YValue] {
        guard !isJob, let planned = state.ports.service(svc.name) else {
            return PortPlan.listens(svc).map {
                .map([("containerPort", .int($0.number)), ("protocol", .string($0.proto.kubernetes))])
            }
        }
        let hostPorts = planned.reach == .none ? [:] : planned.hostPorts
        return planned.containerPorts.map { p in
            .map(
                [("containerPort", .int(p.number))] + (hostPorts[p].map { [("hostPort", .int($0))] } ?? []) + [
                    ("protocol", .string(p.proto.kubernetes))
                ])
        }
    }

    // MARK: Resources and probes

    /// Requests and limits, each of CPU and memory decided on its own: a reservation is the request, a limit
    /// the limit; a request not given is `so`'s default, never above the limit (Kubernetes defaults a missing
    /// request to the limit and refuses a request above it); a limit not given is `so`'s default, raised to the
    /// request. A reservation above its own limit is an error here, not at the API server.
    func resources(_ svc: ComposeService) throws -> YValue {
        let r = spec.sections.resources
        let chosen: ContainerResources
        let source: String
        if let perContainer = r.containers[svc.name] {
            (chosen, source) = (perContainer, "the spec's resources.containers.\(svc.name)")
        } else if let d = svc.deploy, d.limits != nil || d.reservations != nil {
            chosen = ContainerResources(
                reservations: d.reservations.map { ResourceAmounts(cpus: $0.cpus, memory: $0.memory) },
                limits: d.limits.map { ResourceAmounts(cpus: $0.cpus, memory: $0.memory) })
            source = "deploy.resources of service '\(svc.name)'"
        } else if let global = r.containersGlobal {
            (chosen, source) = (global, "the spec's resources.containers")
        } else {
            (chosen, source) = (ContainerResources(), "")
        }
        func pick(
            _ name: String, cpu: Bool, reservation: String?, limit: String?, defaults: (request: String, limit: String)
        ) throws
            -> (request: String, limit: String)
        {
            func parse(_ text: String) -> String? {
                cpu ? Quantity.cpu(text) : Quantity.bytes(text, binaryLetters: true)
            }
            let reserved = reservation.flatMap(parse)
            let limited = limit.flatMap(parse)
            let key = cpu ? "cpus" : "memory"
            switch (reserved, limited) {
            case (let request?, let limited?):
                guard Quantity.value(request, cpu: cpu) <= Quantity.value(limited, cpu: cpu) else {
                    throw SoError(
                        "\(name) reservation \(reservation ?? request) is above its limit \(limit ?? limited) in \(source)",
                        hint:
                            "Kubernetes refuses a request above its limit: lower reservations.\(key) or raise limits.\(key)"
                    )
                }
                return (request, limited)
            case (let request?, nil): return (request, maxQuantity(defaults.limit, request, cpu: cpu))
            case (nil, let limit?): return (minQuantity(defaults.request, limit, cpu: cpu), limit)
            case (nil, nil): return defaults
            }
        }
        let cpu = try pick(
            "CPU", cpu: true, reservation: chosen.reservations?.cpus, limit: chosen.limits?.cpus,
            defaults: (Defaults.cpuRequest, Defaults.cpuLimit))
        let memory = try pick(
            "memory", cpu: false, reservation: chosen.reservations?.memory, limit: chosen.limits?.memory,
            defaults: (Defaults.memoryRequest, Defaults.memoryLimit))
        func yValue(_ cpu: String, _ memory: String) -> YValue {
            .map([("cpu", .string(cpu)), ("memory", .string(memory))])
        }
        return .map([("requests", yValue(cpu.request, memory.request)), ("limits", yValue(cpu.limit, memory.limit))])
    }

    func maxQuantity(_ a: String, _ b: String, cpu: Bool) -> String { minQuantity(a, b, cpu: cpu) == a ? b : a }

    func minQuantity(_ a: String, _ b: String, cpu: Bool) -> String {
        Quantity.value(a, cpu: cpu) <= Quantity.value(b, cpu: cpu) ? a : b
    }

    func readinessProbe(_ svc: ComposeService) throws -> YValue? {
        if let h = svc.healthcheck, !h.disable, let test = h.test, let first = test.first, first != "NONE" {
            let command: [String]
            switch first {
            case "CMD": command = Array(test.dropFirst())
            case "CMD-SHELL": command = ["/bin/sh", "-c", test.dropFirst().joined(separator: " ")]
            default: command = test
            }
            guard !command.isEmpty else { return nil }
            var p: [(String, YValue)] = [("exec", .map([("command", .list(command.map { .string($0) }))]))]
            if let s = h.startPeriod.flatMap(Quantity.seconds) { p.append(("initialDelaySeconds", .int(s))) }
            p.append(("periodSeconds", .int(h.interval.flatMap(Quantity.seconds) ?? 30)))
            p.append(("timeoutSeconds", .int(h.timeout.flatMap(Quantity.seconds) ?? 30)))
            p.append(("failureThreshold", .int(h.retries ?? 3)))
            return .map(p)
        }
        if let port = state.ports.proxiedPorts(svc.name).first {
            return .map([
                ("tcpSocket", .map([("port", .int(port))])), ("initialDelaySeconds", .int(5)),
                ("periodSeconds", .int(10)),
                ("failureThreshold", .int(3)),
            ])
        }
        return nil
    }

    /// Pod fields from compose's long tail: hostname, stop_grace_period (compose's 10 s when unset), sysctls, runtime, platform,
    /// extra_hosts and dns (merged over the pod's services).
    mutating func longTailPodFields() -> [(String, YValue)] {
        let services = compose.services
        var out: [(String, YValue)] = []
        if model.podPerService, let h = services.first?.hostname, NameRules.isDNSLabel(h.lowercased()) {
            out.append(("hostname", .string(h.lowercased())))
        }
        // Stopped as compose stops it: SIGTERM, then SIGKILL after stop_grace_period, 10 s unless set (not
        // Kubernetes' 30 s): a rollout that replaces a container whose PID 1 ignores SIGTERM waits that long.
        if let grace = services.map({ $0.stopGracePeriod.flatMap(Quantity.seconds) ?? Defaults.stopGraceSeconds })
            .max()
        {
            out.append(("terminationGracePeriodSeconds", .int(grace)))
        }
        let gateway = HostAliases.gateway(spec: spec.hostGateway, found: state.options.hostGateway)
        for svc in services {
            for left in HostAliases.resolve(svc.extraHosts, gateway: gateway).leftOut {
                let w = HostAliases.warning(left.entry, reason: left.reason, service: svc, file: compose.path)
                if !state.warnings.contains(w) { state.warnings.append(w) }
            }
        }
        let aliases = HostAliases.resolve(services.flatMap(\.extraHosts), gateway: gateway).aliases
        if !aliases.isEmpty {
            out.append(
                (
                    "hostAliases",
                    .list(
                        aliases.map {
                            .map([("ip", .string($0.ip)), ("hostnames", .list($0.hostnames.map { .string($0) }))])
                        })
                ))
        }
        func unique(_ xs: [String]) -> [String] {
            xs.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        }
        let dns = unique(services.flatMap(\.dns))
        let searches = unique(services.flatMap(\.dnsSearch))
        let options = unique(services.flatMap(\.dnsOpt))
        var dnsConfig: [(String, YValue)] = []
        if !dns.isEmpty { dnsConfig.append(("nameservers", .list(dns.prefix(3).map { .string($0) }))) }
        if !searches.isEmpty { dnsConfig.append(("searches", .list(searches.prefix(32).map { .string($0) }))) }
        if !options.isEmpty {
            dnsConfig.append(
                (
                    "options",
                    .list(
                        options.map { o in
                            let parts = o.split(separator: ":", maxSplits: 1).map(String.init)
                            return .map(
                                [("name", .string(parts[0]))] + (parts.count > 1 ? [("value", .string(parts[1]))] : []))
                        })
                ))
        }
        if !dnsConfig.isEmpty { out.append(("dnsConfig", .map(dnsConfig))) }
        if spec.sections.security.runtimeClass == nil, !spec.sections.security.unlimitedMemlock,
            let rt = services.compactMap(\.runtime).first, !isJob
        {
            out.append(("runtimeClassName", .string(rt)))
        }
        return out
    }

    /// tmpfs paths and shm_size: memory-backed emptyDirs.
    mutating func memoryMounts(_ svc: ComposeService) -> [YValue] {
        var mounts: [YValue] = []
        for (i, t) in svc.tmpfs.enumerated() {
            let path = String(t.split(separator: ":").first ?? Substring(t))
            let name = NameRules.dnsLabel("tmpfs-\(svc.name)-x\(i)")
            addPodVolume(name, .map([("emptyDir", .map([("medium", .string("Memory"))]))]))
            mounts.append(mount(name, path, readOnly: false))
        }
        if let shm = svc.shmSize, let size = Quantity.bytes(shm, binaryLetters: true) {
            let name = NameRules.dnsLabel("shm-\(svc.name)")
            addPodVolume(
                name, .map([("emptyDir", .map([("medium", .string("Memory")), ("sizeLimit", .string(size))]))]))
            mounts.append(mount(name, "/dev/shm", readOnly: false))
        }
        return mounts
    }

    /// Pod Security `restricted`: non-root, no privilege escalation, every capability dropped.
    var restricted: Bool { spec.sections.security.podSecurity == "restricted" }

    func restrictedContext(_ svc: ComposeService) throws -> YValue {
        let sec = spec.sections.security
        func refuse(_ what: String) -> SoError {
            SoError(
                "service '\(svc.name)' asks for \(what), which pod-security 'restricted' forbids",
                hint: "remove it from the compose file, or set security.pod-security to baseline in the spec",
                at: location(svc))
        }
        if sec.privileged || svc.privileged == true { throw refuse("privileged mode") }
        if svc.networkMode == "host" { throw refuse("host networking") }
        let adds = (sec.capabilities + svc.capAdd).map { $0.uppercased().replacingOccurrences(of: "CAP_", with: "") }
        if let bad = adds.first(where: { $0 != "NET_BIND_SERVICE" }) { throw refuse("capability \(bad)") }
        if let user = svc.user, user == "root" || user.split(separator: ":").first == "0" { throw refuse("user root") }
        var s: [(String, YValue)] = [("allowPrivilegeEscalation", .bool(false)), ("runAsNonRoot", .bool(true))]
        var caps: [(String, YValue)] = [("drop", .list([.string("ALL")]))]
        if !adds.isEmpty { caps.insert(("add", .list(adds.map { .string($0) })), at: 0) }
        s.append(("capabilities", .map(caps)))
        if svc.readOnly == true { s.append(("readOnlyRootFilesystem", .bool(true))) }
        if let user = svc.user, let uid = Int(user.split(separator: ":")[0]) { s.append(("runAsUser", .int(uid))) }
        return .map(s)
    }

    mutating func securityContext(_ svc: ComposeService) -> YValue {
        let sec = spec.sections.security
        let privileged = sec.privileged || svc.privileged == true
        var s: [(String, YValue)] = []
        let caps = sec.capabilities + svc.capAdd
        if privileged {
            s.append(("privileged", .bool(true)))
        } else if !caps.contains(where: { $0.uppercased().hasSuffix("SYS_ADMIN") }) {
            s.append(("allowPrivilegeEscalation", .bool(false)))
        }
        if !caps.isEmpty || !svc.capDrop.isEmpty {
            var c: [(String, YValue)] = []
            if !caps.isEmpty { c.append(("add", .list(caps.map { .string($0) }))) }
            if !svc.capDrop.isEmpty { c.append(("drop", .list(svc.capDrop.map { .string($0) }))) }
            s.append(("capabilities", .map(c)))
        }
        if svc.readOnly == true { s.append(("readOnlyRootFilesystem", .bool(true))) }
        if let user = svc.user {
            let parts = user.split(separator: ":")
            if let uid = Int(parts[0]) {
                s.append(("runAsUser", .int(uid)))
                if parts.count > 1, let gid = Int(parts[1]) { s.append(("runAsGroup", .int(gid))) }
            } else if user == "root" {
                s.append(("runAsUser", .int(0)))
            } else {
                state.warnings.append(
                    Diagnostic(
                        "user '\(user)' of service '\(svc.name)' is a name, not a number; the image's user is used",
                        hint: "write user: \"UID[:GID]\"", at: location(svc)))
            }
        }
        return .map(s)
    }
}

extension YValue {
    var pairs: [(String, YValue)]? {
        if case .map(let p) = self { return p }
        return nil
    }
    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}
