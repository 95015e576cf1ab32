import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

struct RenderState {
    /// What render reads and never changes (the model, the options, the port plan), behind one reference: a copy
    /// of the state (each pod's `PodBuilder` takes one) is a pointer to them, not their bytes (issue 67).
    private let inputs: Inputs
    // Read in place (`_read`): a getter would copy each value to a temporary of every caller's frame.
    var model: DeploymentModel { _read { yield inputs.model } }
    var options: RenderOptions { _read { yield inputs.options } }
    /// Every port decision, made once from the model (`Renderer.ports(of:)`).
    var ports: PortPlan { _read { yield inputs.ports } }
    var warnings: [Diagnostic] = []

    var namespaces: [KubeObject] = []
    /// ResourceQuota, LimitRange and NetworkPolicies: in place before any pod exists.
    var policies: [KubeObject] = []
    var secrets: [KubeObject] = []
    var configMaps: [KubeObject] = []
    var volumes: [KubeObject] = []  // PVs then PVCs
    var claims: [KubeObject] = []
    var services: [KubeObject] = []
    var workloads: [KubeObject] = []
    var jobs: [KubeObject] = []
    var ingresses: [KubeObject] = []
    var others: [KubeObject] = []
    /// The spec's egress proxy, settled once before any pod is built (`egressProxy()`).
    var proxy: EgressProxy?

    init(model: DeploymentModel, options: RenderOptions, ports: PortPlan) {
        inputs = Inputs(model: model, options: options, ports: ports)
    }

    final class Inputs {
        let model: DeploymentModel
        let options: RenderOptions
        let ports: PortPlan

        init(model: DeploymentModel, options: RenderOptions, ports: PortPlan) {
            self.model = model
            self.options = options
            self.ports = ports
        }
    }

    var id: String { model.id }
    var namespace: String { Renderer.namespace(of: model) }
    var spec: Spec { inputs.model.spec }
    var multiPod: Bool { model.pods.count > 1 || model.podPerService }

    /// Labels on every object (laconic-so's two, plus the recommended app.kubernetes.io set).
    var baseLabels: [(String, String)] { DeploymentNames.labels(model) }

    func labels(component: String? = nil, extra: [(String, String)] = []) -> [(String, String)] {
        var l = baseLabels
        if let component { l.append((DeploymentNames.Label.component, NameRules.labelValue(component))) }
        return l + extra
    }

    /// The manifest: the stages in their order (`Stage` defines it for rendering and applying alike).
    func ordered() -> [KubeObject] { Stage.allCases.flatMap(objects(in:)) }

    func objects(in stage: Stage) -> [KubeObject] {
        switch stage {
        case .namespace: return namespaces
        case .policies: return policies
        case .secrets: return secrets
        case .configMaps: return configMaps
        case .volumes: return volumes
        case .claims: return claims
        case .services: return services
        case .workloads: return workloads
        case .jobs: return jobs
        case .ingresses: return ingresses
        case .others: return others
        }
    }

    mutating func warn(_ message: String, hint: String? = nil, at location: SourceLocation? = nil) {
        let d = Diagnostic(message, hint: hint, at: location)
        if !warnings.contains(d) { warnings.append(d) }
    }

    mutating func run() throws {
        namespaces.append(namespaceObject())
        if let reader = options.dashboardAccount {
            policies.append(reader.binding(namespace: namespace, labels: labels()))
        }
        renderSecrets()
        renderComposeSecretPlaceholders()
        proxy = try egressProxy()
        try renderWorkloads()
        renderLinkAliases()
        try renderIngress()
        renderExternalServices()
        try renderIsolation()
        try checkUniqueObjects()
    }

    /// The pods and the jobs (the deepest part of a render: see `PodBuilder.build()`).
    mutating func renderWorkloads() throws {
        let parts = model.pods.map { model.podPerService ? perService($0) : splitOnPortClashes($0) }
        for part in parts.joined() {
            // Plain compose: a one-shot service (restart "no" or on-failure, no ports) runs once, as a Job.
            if model.podPerService, let svc = part.compose.services.first, Self.isOneShot(svc) {
                try renderJob(part)
            } else {
                try renderPod(part)
            }
        }
        for job in model.jobs { try renderJob(job) }
    }

    /// Names people chose must survive as Kubernetes names: unique after sanitising, at most 63 characters.
    static func checkServiceNames(_ model: DeploymentModel) throws {
        let spec = model.spec
        var seen: [String: (name: String, file: String)] = [:]
        for c in model.pods {
            try checkLength(c.name, what: "pod name", at: SourceLocation(file: Path.join(model.directory, "stack.yml")))
            for s in c.compose.services {
                let at = SourceLocation(file: c.compose.path, line: s.line)
                try checkLength(s.name, what: "service name", at: at)
                let k = NameRules.serviceName(s.name)
                if let other = seen[k] {
                    if other.name == s.name {
                        throw SoError(
                            "service '\(s.name)' appears in two compose files (\(other.file) and \(c.relativePath))",
                            hint: "compose service names must be unique across a stack's pods", at: at)
                    }
                    throw SoError(
                        "services '\(other.name)' and '\(s.name)' would both be named '\(k)' in Kubernetes",
                        hint: "rename one of them; Kubernetes names allow only lowercase letters, digits and '-'",
                        at: at)
                }
                seen[k] = (s.name, c.relativePath)
            }
            var volumes: [String: String] = [:]
            for v in c.compose.volumes {
                let k = NameRules.dnsLabel(v.name)
                let at = SourceLocation(file: c.compose.path, line: v.line)
                try checkLength(v.name, what: "volume name", at: at)
                if let other = volumes[k], other != v.name {
                    throw SoError(
                        "volumes '\(other)' and '\(v.name)' would both be named '\(k)' in Kubernetes",
                        hint: "rename one of them", at: at)
                }
                volumes[k] = v.name
            }
        }
        for (key, value) in spec.sections.labels {
            guard NameRules.isLabelKey(key) else {
                throw SoError(
                    "label key '\(key)' in the spec's labels is not a valid Kubernetes label key",
                    hint: "use [prefix/]name with letters, digits, '-', '_', '.' (name ≤ 63)",
                    at: SourceLocation(file: spec.path))
            }
            guard NameRules.isLabelValue(value) else {
                throw SoError(
                    "label '\(key)' in the spec's labels has an invalid value '\(value)'",
                    hint:
                        "label values are at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
                    at: SourceLocation(file: spec.path))
            }
        }
        for (key, _) in spec.sections.annotations
        where !NameRules.isLabelKey(key.replacingOccurrences(of: "{name}", with: "x")) {
            throw SoError(
                "annotation key '\(key)' in the spec's annotations is not a valid Kubernetes key",
                hint: "use [prefix/]name with letters, digits, '-', '_', '.'", at: SourceLocation(file: spec.path))
        }
    }

    static func checkLength(_ name: String, what: String, at location: SourceLocation) throws {
        if name.count > 63 {
            throw SoError(
                "\(what) '\(name.prefix(20))…' is \(name.count) characters; Kubernetes allows 63", hint: "shorten it",
                at: location)
        }
    }

    /// No two objects of one kind may share a name (they would overwrite each other).
    func checkUniqueObjects() throws {
        var seen: Set<String> = []
        for o in ordered() {
            let key = "\(o.kind)/\(o.namespace ?? "")/\(o.name)"
            if !seen.insert(key).inserted {
                throw SoError(
                    "two \(o.kind)s would be named \(o.name)",
                    hint: "rename one of the compose services, volumes or files they come from",
                    at: SourceLocation(file: spec.path))
            }
        }
    }

    // MARK: Namespace and secrets

    var needsPrivileged: Bool {
        spec.sections.security.privileged || spec.sections.security.unlimitedMemlock
            || model.pods.contains {
                $0.compose.services.contains { $0.networkMode == "host" || $0.privileged == true }
            } || usesHostPorts
    }

    /// A container binds a host port on the node (Pod Security baseline forbids it).
    var usesHostPorts: Bool { ports.services.contains { $0.reach != .none && !$0.hostPorts.isEmpty } }

    mutating func namespaceObject() -> KubeObject {
        var level = spec.sections.security.podSecurity ?? (needsPrivileged ? "privileged" : "baseline")
        if needsPrivileged && level != "privileged" {
            warn(
                "pod security '\(level)' does not admit privileged or host-network pods; using 'privileged'",
                at: SourceLocation(file: spec.path))
            level = "privileged"
        }
        let psa = ["enforce", "audit", "warn"].map { ("pod-security.kubernetes.io/\($0)", level) }
        var annotations = [(DeploymentNames.directoryAnnotation, model.directory)]
        // A workspace's checkout ("CONTAINER PATH"): what `cleanup --idle` and `so dashboard` find it by.
        if let w = spec.workspace {
            if let idle = w.idleSeconds { annotations.append((DeploymentNames.Annotation.idleAfter, String(idle))) }
            annotations.append((DeploymentNames.Annotation.workspace, "\(NameRules.dnsLabel(w.service)) \(w.path)"))
        }
        return KubeObject(.namespace, name: namespace, labels: labels() + psa, annotations: annotations)
    }

    var generatedSecretName: String { DeploymentNames.generatedSecrets(id) }
    var hasGeneratedSecret: Bool { !model.secretKeys.isEmpty }

    mutating func renderSecrets() {
        if hasGeneratedSecret && options.placeholderSecrets {
            secrets.append(
                KubeObject(
                    .secret, name: generatedSecretName, namespace: namespace, labels: labels(),
                    annotations: [
                        (DeploymentNames.Annotation.placeholder, "values are generated at start and never rendered")
                    ],
                    body: [
                        ("type", .string("Opaque")),
                        (
                            "stringData",
                            .map(
                                model.secretKeys.map { k in
                                    (
                                        k,
                                        .string(
                                            model.credentialsFiles.contains { $0.keys.contains(k) }
                                                ? "<copied from a credentials file at start>" : "<generated at start>")
                                    )
                                })
                        ),
                    ]))
        }
        if !model.caCertificates.isEmpty {
            secrets.append(
                KubeObject(
                    .secret, name: "\(id)-ca-certificates", namespace: namespace, labels: labels(),
                    body: [
                        ("type", .string("Opaque")),
                        (
                            "data",
                            .map(
                                model.caCertificates.enumerated().map {
                                    (
                                        "ca-\($0.offset).pem",
                                        .string($0.element.base64EncodedString())
                                    )
                                })
                        ),
                    ]))
        }
    }

    // MARK: Pods

    /// Several Deployments (several pods, or a service split out of its pod) need component selectors.
    var componentSelectors: Bool { multiPod || ports.services.contains(where: \.isSplit) }
    func deploymentName(_ pod: String) -> String {
        componentSelectors ? "\(id)-\(NameRules.dnsLabel(pod))-deployment" : "\(id)-deployment"
    }
    func selector(_ pod: String) -> [(String, String)] {
        componentSelectors
            ? [("app", id), (DeploymentNames.Label.component, NameRules.labelValue(pod))] : [("app", id)]
    }

    /// Containers of one pod share its network. laconic-so puts every service of a compose file in one
    /// pod, where two services declaring the same container port cannot both bind it: such a service
    /// runs in a Deployment of its own (reachable by its Service name, as in compose). The port plan decides.
    mutating func splitOnPortClashes(_ pod: ComposeComponent) -> [ComposeComponent] {
        var main = pod
        main.compose.services = []
        var split: [ComposeComponent] = []
        for svc in pod.compose.services {
            guard let planned = ports.service(svc.name), planned.isSplit else {
                main.compose.services.append(svc)
                continue
            }
            var own = pod
            own.name = planned.component
            own.compose.services = [svc]
            split.append(own)
            let clashes = planned.clashes.map(\.description).sorted().joined(separator: ", ")
            warn(
                "service '\(svc.name)' listens on \(clashes) like another service of pod '\(pod.name)'; it runs in its own Deployment",
                hint:
                    "in one pod only one container can bind a port; reach it through its Service name '\(NameRules.serviceName(svc.name))'",
                at: SourceLocation(file: pod.compose.path, line: svc.line))
        }
        return [main] + split
    }
    /// Plain compose: every service in a Deployment of its own, named after the service.
    func perService(_ pod: ComposeComponent) -> [ComposeComponent] {
        pod.compose.services.map { svc in
            var own = pod
            own.name = svc.name
            own.compose.services = [svc]
            return own
        }
    }

    /// The pod's replicas: the spec's `replicas:`, else the most its services' `deploy.replicas` ask, else one.
    func replicas(_ pod: ComposeComponent) -> Int {
        spec.replicas ?? pod.compose.services.compactMap { $0.deploy?.replicas }.max() ?? 1
    }

    func serviceSelector(_ pod: String) -> [(String, String)] {
        [("app", id), (DeploymentNames.Label.component, NameRules.labelValue(pod))]
    }

    /// Takes in what building a pod produced: warnings, ConfigMaps, volumes and claims (once each).
    mutating func absorb(_ builder: PodBuilder) {
        warnings = builder.state.warnings
        configMaps += builder.configMaps.filter { cm in !configMaps.contains { $0.name == cm.name } }
        for v in builder.persistentVolumes where !volumes.contains(where: { $0.name == v.name }) { volumes.append(v) }
        for c in builder.claims where !claims.contains(where: { $0.name == c.name }) { claims.append(c) }
    }

    mutating func renderPod(_ pod: ComposeComponent) throws {
        var builder = PodBuilder(state: self, component: pod, isJob: false)
        let podSpec = try builder.build()
        absorb(builder)
        addDeployment(pod, podSpec: podSpec, usesClaims: builder.usesClaims)
        renderServices(pod)
    }

    /// The Deployment of a pod whose spec `PodBuilder` built.
    mutating func addDeployment(_ pod: ComposeComponent, podSpec: YValue, usesClaims: Bool) {
        let replicas = replicas(pod)
        // A hostPort is held by one pod per node: a surge pod could not start beside the old one.
        let hostPorts = pod.compose.services.contains { s in
            ports.service(s.name).map { $0.reach != .none && !$0.hostPorts.isEmpty } ?? false
        }
        if hostPorts && replicas > 1 {
            warn(
                "pod '\(pod.name)' binds host ports and asks for \(replicas) replicas; one node runs only one of them",
                hint: "use replicas: 1, or a NodePort (host port in 30000–32767)",
                at: SourceLocation(file: pod.compose.path))
        }
        let strategy: YValue =
            usesClaims || hostPorts
            ? .map([("type", .string("Recreate"))])
            : .map([
                ("type", .string("RollingUpdate")),
                ("rollingUpdate", .map([("maxUnavailable", .int(0)), ("maxSurge", .int(1))])),
            ])
        var templateMeta: [(String, YValue)] = [
            ("labels", .map((labels(component: pod.name) + spec.sections.labels).map { ($0.0, .string($0.1)) }))
        ]
        let annotations = podAnnotations(pod)
        if !annotations.isEmpty {
            templateMeta.append(("annotations", .map(annotations.map { ($0.0, .string($0.1)) })))
        }
        workloads.append(
            KubeObject(
                .deployment, name: deploymentName(pod.name), namespace: namespace,
                labels: labels(component: pod.name),
                body: [
                    (
                        "spec",
                        .map([
                            ("replicas", .int(replicas)),
                            (
                                "selector",
                                .map([("matchLabels", .map(selector(pod.name).map { ($0.0, .string($0.1)) }))])
                            ),
                            ("strategy", strategy),
                            ("template", .map([("metadata", .map(templateMeta)), ("spec", podSpec)])),
                        ])
                    )
                ]))
    }

    /// Compose `annotations` of the pod's services (valid keys only), then the spec's, which win; a
    /// `{name}` in a spec key is repeated once per service.
    func podAnnotations(_ pod: ComposeComponent) -> [(String, String)] {
        var out: [(String, String)] = []
        func set(_ k: String, _ v: String) {
            if let i = out.firstIndex(where: { $0.0 == k }) { out[i].1 = v } else { out.append((k, v)) }
        }
        for s in pod.compose.services { for (k, v) in s.annotations where NameRules.isLabelKey(k) { set(k, v) } }
        for (k, v) in spec.sections.annotations {
            if k.contains("{name}") {
                for s in pod.compose.services {
                    set(k.replacingOccurrences(of: "{name}", with: NameRules.dnsLabel(s.name)), v)
                }
            } else {
                set(k, v)
            }
        }
        return out
    }

    static func isOneShot(_ svc: ComposeService) -> Bool {
        guard let r = svc.restart, r == "no" || r.hasPrefix("on-failure") else { return false }
        return svc.ports.isEmpty && svc.expose.isEmpty
    }

    mutating func renderJob(_ job: ComposeComponent) throws {
        var builder = PodBuilder(state: self, component: job, isJob: true)
        let podSpec = try builder.build()
        absorb(builder)
        let templateLabels = [("app", "\(id)-job")] + labels(component: job.name).filter { $0.0 != "app" }
        jobs.append(
            KubeObject(
                .job, name: "\(id)-job-\(NameRules.dnsLabel(job.name))", namespace: namespace,
                labels: labels(component: job.name),
                body: [
                    (
                        "spec",
                        .map([
                            ("backoffLimit", .int(0)),
                            (
                                "template",
                                .map([
                                    (
                                        "metadata",
                                        .map([("labels", .map(templateLabels.map { ($0.0, .string($0.1)) }))])
                                    ),
                                    ("spec", podSpec),
                                ])
                            ),
                        ])
                    )
                ]))
    }
}
