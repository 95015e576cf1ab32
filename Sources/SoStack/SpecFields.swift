import Foundation
import SoBasics
import SoCompose

/// The keys of `spec.yml` as a `Spec` holds them (in its box), and their decoding.
public struct SpecFields: Sendable {
    public var path: String
    public var text: String
    public var root: YNode
    public var stack: String
    public var stackLine: Int?
    public var deployTo: DeployTarget
    public var kubeConfig: String?
    public var imageRegistry: String?
    public var config: [ConfigEntry]
    public var credentialsFiles: [String]
    /// `network.ports`: each listed service's entries as written (`${VAR}` allowed); they replace the compose
    /// file's (as laconic-so does), parsed once the deployment's values are known (`SpecPorts.apply`).
    public var ports: [(service: String, entries: [ComposePortEntry], line: Int?)]
    public var httpProxy: [HTTPProxy]
    /// `network.tls`: how every http-proxy host gets its certificate unless its own `tls` says otherwise; nil:
    /// the target's default (`IngressTLS.targetDefault`).
    public var tls: IngressTLS?
    public var volumes: [(name: String, path: String?, line: Int?)]
    public var configmaps: [(name: String, path: String, line: Int?)]
    public var secrets: [String]
    public var namespace: String?
    public var replicas: Int?
    public var kindClusterName: String?
    public var kindMountRoot: String?
    /// The kind node image (`kind-node-image:`, `deploy init --kind-node-image`): written into kind-config.yml.
    public var kindNodeImage: String?
    /// `kind-workers:`: worker nodes of the kind cluster beside its control plane (0: one node, kind's default).
    public var kindWorkers = 0
    /// `volume-node:`: the node that holds the spec's path volumes (their PersistentVolumes name it).
    public var volumeNode: String?
    /// `replica-spread:`: how a Deployment's replicas spread across nodes.
    public var replicaSpread: ReplicaSpread = .soft
    /// `record-history:`: how many revisions of the deployment's record the cluster keeps (10 when unset).
    public var recordHistory: Int?
    public var acmeEmail: String?
    /// Host environment variables copied into the deployment's Secret at start (`secret-env:`).
    public var secretEnv: [String]
    /// Optional pods of the stack (`optional-pods:` in stack.yml) this deployment includes (`deploy init --with`).
    public var with: [String] = []
    /// Compose profiles to deploy (`deploy init --profile`); services with other profiles are left out.
    public var profiles: [String] = []
    /// How long after each start the deployment counts as expired (`so cleanup --expired`).
    public var ttl: Double?
    /// The address at which pods reach the host, for compose's `extra_hosts: NAME:host-gateway`
    /// (`host-gateway:`); without it, start on kind uses the gateway of kind's docker network.
    public var hostGateway: String?
    /// `workspace:` (so's own key; agent-workspace's spec-defaults set it).
    public var workspace: WorkspaceSpec?
    /// `agents:` — agent CLIs added to (or replacing entries of) the stack's table.
    public var agents: [AgentProfile] = []
    /// Keys used when rendering (resources, security, images, scheduling, ingress …).
    public var sections = SpecSections()

    /// Every top-level key `so` understands (laconic-so's set plus `so`'s own).
    public static let knownKeys = [
        "stack", "deploy-to", "kube-config", "image-registry", "image-pull-secret", "image-pull-policy",
        "image-overrides",
        "config", "credentials-files", "network", "volumes", "configmaps", "secrets", "resources", "security",
        "replicas",
        "namespace", "annotations", "labels", "node-affinities", "node-tolerations", "kind-cluster-name",
        "kind-mount-root",
        "kind-node-image", "kind-workers",
        "caddy-ingress-image", "wait-image", "maintenance-service", "external-services", "ca-certificates",
        "runtime-class",
        "secret-env", "ingress-class", "ttl", "with", "egress", "egress-ports", "egress-proxy", "quota", "profiles",
        "host-gateway", "workspace", "agents", "volume-node", "replica-spread",
        "record-history",
    ]

    /// The most worker nodes `kind-workers:` asks for (each is a container of the host).
    public static let maxKindWorkers = 8

    static func load(_ path: String, fs: FileSystem, diagnostics: DiagnosticSink) throws -> SpecFields {
        let text = try fs.readText(path, limit: YAMLFile.maxBytes, what: "spec file")
        guard let root = try YAMLFile.parse(text, file: path) else {
            throw SoError(
                "spec file is empty",
                hint: "create one with 'so --stack NAME deploy init --output \(Path.basename(path))'",
                at: SourceLocation(file: path))
        }
        return try decode(root, text: text, path: path, diagnostics: diagnostics)
    }

    static func decode(_ root: YNode, text: String, path: String, diagnostics: DiagnosticSink) throws
        -> SpecFields
    {
        let m = try root.mapping("spec.yml")
        let stackNode = try m.required(
            "stack", hint: "add 'stack: NAME' (a built-in stack) or 'stack: /path/to/stack-dir'")
        let stack = try stackNode.string("'stack'")
        let deployNode = try m.required("deploy-to", hint: "add 'deploy-to: k8s-kind' (or k8s)")
        let deployTo = try DeployTarget.parse(try deployNode.string("'deploy-to'"), at: deployNode.location)
        var spec = SpecFields(
            path: path, text: text, root: root, stack: stack, stackLine: stackNode.line, deployTo: deployTo,
            config: [], credentialsFiles: [], ports: [], httpProxy: [], volumes: [], configmaps: [], secrets: [],
            secretEnv: [])
        spec.kubeConfig = try m.string("kube-config")
        spec.imageRegistry = try m.string("image-registry")
        if deployTo == .k8s && spec.kubeConfig == nil {
            throw root.error(
                "deploy-to k8s needs 'kube-config'",
                hint: "add 'kube-config: /path/to/kubeconfig' or use deploy-to: k8s-kind")
        }
        if let c = m.nonNull("config") { spec.config = try decodeConfig(c) }
        spec.credentialsFiles =
            try m.value("credentials-files")?.stringList("'credentials-files'", allowSingle: true) ?? []
        if let n = m.nonNull("network") { try spec.decodeNetwork(n, diagnostics: diagnostics) }
        try spec.decodeStorage(m)
        try spec.decodeCluster(m, diagnostics: diagnostics)
        try spec.decodePlacement(m)
        spec.secretEnv = try m.value("secret-env")?.stringList("'secret-env'") ?? []
        if let secretEnvNode = m.value("secret-env") {
            for (i, name) in spec.secretEnv.enumerated() {
                try checkEnvName(name, at: secretEnvNode.location, index: i)
            }
        }
        spec.sections = try SpecSections.decode(m, diagnostics: diagnostics)
        try spec.decodeHost(m)
        if let w = m.nonNull("workspace") { spec.workspace = try decodeWorkspace(w, diagnostics: diagnostics) }
        if let a = m.nonNull("agents") { spec.agents = try AgentTable.decode(a, diagnostics: diagnostics) }
        spec.with = try m.value("with")?.stringList("'with'", allowSingle: true) ?? []
        spec.profiles = try m.value("profiles")?.stringList("'profiles'", allowSingle: true) ?? []
        m.accept(knownKeys)
        m.finish(into: diagnostics)
        return spec
    }

    /// `config:`: variable names checked, values as text, `$generate` tokens parsed.
    static func decodeConfig(_ c: YNode) throws -> [ConfigEntry] {
        var out: [ConfigEntry] = []
        for e in try c.entries("'config'") {
            try checkEnvName(e.key, at: e.keyNode.location)
            let value = try configValue(e.value, key: e.key)
            let token = try GenerateToken.parse(value, at: e.value.location)
            out.append(ConfigEntry(key: e.key, value: value, line: e.keyNode.line, token: token))
        }
        return out
    }

    /// `network:`: ports, http-proxy and acme-email.
    mutating func decodeNetwork(_ n: YNode, diagnostics: DiagnosticSink) throws {
        let nm = try n.mapping("'network'")
        if let p = nm.nonNull("ports") {
            for e in try p.entries("'network.ports'") {
                let list = e.value.isNull ? [] : try e.value.sequence("network.ports.\(e.key)").map(ComposePorts.entry)
                ports.append((e.key, list, e.keyNode.line))
            }
        }
        if let hp = nm.nonNull("http-proxy") {
            for (i, h) in try hp.sequence("'network.http-proxy'").enumerated() {
                httpProxy.append(try Self.decodeHTTPProxy(h, index: i, diagnostics: diagnostics))
            }
        }
        if let t = nm.nonNull("tls") {
            tls = try IngressTLS.decode(t, what: "'network.tls'", allowing: ["hosts"], diagnostics: diagnostics)
            if t.isMapping, let hosts = try t.mapping("'network.tls'").nonNull("hosts") {
                for e in try hosts.entries("'network.tls.hosts'") {
                    let indices = httpProxy.indices.filter { httpProxy[$0].hostName == e.key }
                    guard !indices.isEmpty else {
                        throw e.keyNode.error(
                            "network.tls.hosts names '\(e.key)', which no http-proxy entry routes",
                            hint: "hosts routed: "
                                + (httpProxy.isEmpty ? "none" : httpProxy.map(\.hostName).joined(separator: ", ")))
                    }
                    let setting = try IngressTLS.decode(
                        e.value, what: "'network.tls.hosts.\(e.key)'", diagnostics: diagnostics)
                    for i in indices {
                        if httpProxy[i].tls != nil {
                            throw e.keyNode.error(
                                "the TLS of host '\(e.key)' is set twice: in its http-proxy entry and here",
                                hint: "keep one of the two")
                        }
                        httpProxy[i].tls = setting
                    }
                }
            }
        }
        acmeEmail = try nm.string("acme-email")
        nm.finish(into: diagnostics)
    }

    /// One `network.http-proxy` entry: its host name and routes (`proxy-to: SERVICE:PORT`).
    static func decodeHTTPProxy(_ h: YNode, index i: Int, diagnostics: DiagnosticSink) throws -> HTTPProxy {
        let hm = try h.mapping("network.http-proxy[\(i)]")
        let host = try hm.required("host-name").string("'host-name'")
        var routes: [HTTPProxy.Route] = []
        for (j, r) in try (hm.nonNull("routes")?.sequence("'routes'") ?? []).enumerated() {
            let rm = try r.mapping("routes[\(j)]")
            let proxyTo = try rm.required("proxy-to").string("'proxy-to'")
            guard let target = ServicePort(proxyTo) else {
                throw r.error(
                    "proxy-to '\(proxyTo)' must be SERVICE:PORT", hint: "for example web:8080 (a port in 1-65535)")
            }
            routes.append(.init(path: try rm.string("path") ?? "/", service: target.service, port: target.port))
            rm.finish(into: diagnostics)
        }
        var tls: IngressTLS?
        if let t = hm.nonNull("tls") {
            if routes.isEmpty {
                throw t.error(
                    "http-proxy host '\(host)' routes nothing, so its tls has nothing to secure",
                    hint: "add routes: to the entry, or remove its tls:")
            }
            tls = try IngressTLS.decode(t, what: "'tls' of host '\(host)'", diagnostics: diagnostics)
        }
        hm.finish(into: diagnostics)
        return HTTPProxy(hostName: host, routes: routes, tls: tls)
    }

    /// `volumes:`, `configmaps:` and `secrets:`.
    mutating func decodeStorage(_ m: MapReader) throws {
        if let v = m.nonNull("volumes") {
            for e in try v.entries("'volumes'") {
                try NameRules.checkComponent(e.key, what: "volume name", at: e.keyNode.location)
                volumes.append((e.key, try e.value.optionalString("volume '\(e.key)'"), e.keyNode.line))
            }
        }
        if let c = m.nonNull("configmaps") {
            for e in try c.entries("'configmaps'") {
                try NameRules.checkComponent(e.key, what: "configmap name", at: e.keyNode.location)
                let p = try e.value.optionalString("configmap '\(e.key)'") ?? "./configmaps/\(e.key)"
                configmaps.append((e.key, p, e.keyNode.line))
            }
        }
        if let s = m.nonNull("secrets") {
            // laconic-so reads only the keys; values are free-form.
            secrets = try s.entries("'secrets'").map(\.key)
        }
    }

    /// `namespace:`, `replicas:` and the kind cluster's name, mount root and node image.
    mutating func decodeCluster(_ m: MapReader, diagnostics: DiagnosticSink) throws {
        if let ns = m.nonNull("namespace") {
            let v = try ns.string("'namespace'")
            guard NameRules.isDNSLabel(v) else {
                throw ns.error(
                    "namespace '\(v)' is not a valid Kubernetes name",
                    hint: "use lowercase letters, digits and '-', at most 63 characters")
            }
            namespace = v
        }
        replicas = try m.int("replicas")
        if let r = replicas, r < 0 {
            throw m.error(at: "replicas", "replicas must be 0 or more", hint: "write a number such as 1")
        }
        if let k = m.nonNull("kind-cluster-name") {
            let v = try k.string("'kind-cluster-name'")
            guard NameRules.isDNSLabel(v) else {
                throw k.error(
                    "kind-cluster-name '\(v)' is not a valid cluster name",
                    hint: "use lowercase letters, digits and '-'")
            }
            kindClusterName = v
        }
        if let k = m.nonNull("kind-mount-root") {
            let v = try k.string("'kind-mount-root'")
            guard v.hasPrefix("/") || v.hasPrefix("~") else {
                throw k.error("kind-mount-root must be an absolute path", hint: "for example /srv/kind")
            }
            kindMountRoot = v
        }
        if let k = m.nonNull("kind-node-image") {
            let v = try k.string("'kind-node-image'")
            guard ImageReference.isPlausible(v) else {
                throw k.error(
                    "kind-node-image '\(v)' is not an image reference",
                    hint: "write a kind node image, e.g. kind-node-image: kindest/node:v1.31.0")
            }
            kindNodeImage = v
            if deployTo == .k8s {
                diagnostics.warn(
                    "kind-node-image is ignored for deploy-to k8s",
                    hint: "it sets the image of a kind cluster's node; remove it", at: k.location)
            }
        }
        if let k = m.nonNull("kind-workers") {
            let v = try k.int("'kind-workers'")
            guard (0...Self.maxKindWorkers).contains(v) else {
                throw k.error(
                    "kind-workers is \(v): a kind cluster here takes 0 to \(Self.maxKindWorkers) worker nodes",
                    hint: "each worker is a container of this host's: write e.g. kind-workers: 2")
            }
            kindWorkers = v
            if deployTo == .k8s {
                diagnostics.warn(
                    "kind-workers is ignored for deploy-to k8s",
                    hint: "it sets the worker nodes of a kind cluster; remove it", at: k.location)
            }
        }
    }

    /// `volume-node:` and `replica-spread:`: where path volumes live, and how replicas spread over nodes.
    mutating func decodePlacement(_ m: MapReader) throws {
        if let n = m.nonNull("volume-node") {
            let v = try n.string("'volume-node'")
            guard NameRules.isDNSSubdomain(v) else {
                throw n.error(
                    "volume-node '\(v)' is not a node name",
                    hint: "write the name 'kubectl get nodes' shows, e.g. volume-node: worker-1")
            }
            volumeNode = v
        }
        if let r = m.nonNull("replica-spread") {
            let v = try r.string("'replica-spread'")
            guard let spread = ReplicaSpread(rawValue: v) else {
                throw r.error(
                    "replica-spread '\(v)' is not one of soft, hard, none",
                    hint: "soft (the default) prefers other nodes, hard requires them, none leaves it to the scheduler")
            }
            replicaSpread = spread
        }
        if let h = m.nonNull("record-history") {
            let v = try h.int("'record-history'")
            guard (1...100).contains(v) else {
                throw h.error(
                    "record-history \(v) is not 1 to 100",
                    hint:
                        "the number of revisions of the deployment's record the cluster keeps, e.g. record-history: 10")
            }
            recordHistory = v
        }
    }

    /// `ttl:` and `host-gateway:`.
    mutating func decodeHost(_ m: MapReader) throws {
        if let t = m.nonNull("ttl") {
            let v = try t.string("'ttl'")
            guard let seconds = DurationText.seconds(v), seconds > 0 else {
                throw t.error("ttl '\(v)' is not a duration", hint: "write a duration such as 90m, 4h or 2d")
            }
            ttl = seconds
        }
        if let g = m.nonNull("host-gateway") {
            let v = try g.string("'host-gateway'")
            guard IPAddress.isValid(v) else {
                throw g.error(
                    "host-gateway '\(v)' is not an IP address",
                    hint: "write the address at which pods reach the host, e.g. host-gateway: 172.18.0.1 "
                        + "(kind's docker network gateway: docker network inspect kind)")
            }
            hostGateway = v
        }
    }

    /// `workspace:`: the service holding the checkout, its absolute path, the task command and the agent.
    static func decodeWorkspace(_ w: YNode, diagnostics: DiagnosticSink) throws -> WorkspaceSpec {
        let wm = try w.mapping("'workspace'")
        let path = try wm.string("path") ?? "/workspace"
        guard path.hasPrefix("/") else {
            throw (wm.nonNull("path") ?? w).error(
                "workspace path '\(path)' is not absolute",
                hint: "write the checkout's path in the container, e.g. path: /workspace")
        }
        var workspace = WorkspaceSpec(
            service: try wm.required(
                "service",
                hint: "name the compose service whose container holds the checkout, e.g. service: agent"
            ).string("'workspace.service'"),
            path: path, task: try wm.string("task"), agent: try wm.string("agent"), line: w.line)
        workspace.agentLine = wm.nonNull("agent")?.line
        if let idle = try wm.string("idle") {
            guard let seconds = DurationText.seconds(idle), seconds >= 1, seconds < 1e9 else {
                throw (wm.nonNull("idle") ?? w).error(
                    "workspace idle '\(idle)' is not a duration",
                    hint:
                        "write how long the workspace may sit unused before 'so cleanup --idle' stops it, e.g. idle: 2h"
                )
            }
            workspace.idleSeconds = Int(seconds.rounded(.up))
        }
        if let node = wm.nonNull("pool") {
            let size = try node.int("'workspace.pool'")
            guard (0...50).contains(size) else {
                throw node.error(
                    "workspace pool \(size) is not a number from 0 to 50",
                    hint: "write how many warm workspaces 'so up' keeps for this stack, e.g. pool: 3 (0: none)")
            }
            workspace.pool = size
        }
        wm.finish(into: diagnostics)
        return workspace
    }

    static func checkEnvName(_ name: String, at location: SourceLocation, index: Int? = nil) throws {
        guard NameRules.isVariable(name) else {
            throw SoError(
                "invalid variable name '\(name)'", hint: "use letters, digits and '_', not starting with a digit",
                at: location)
        }
    }

    /// A config value as text: strings as written, ints as written, YAML bools as true/false.
    static func configValue(_ node: YNode, key: String) throws -> String {
        if node.isNull { return "" }
        guard node.isScalar else {
            throw node.error(
                "config value of '\(key)' must be a single value, not \(node.isMapping ? "a mapping" : "a list")",
                hint: "quote it or join the values into one string")
        }
        let raw = try node.string("'\(key)'")
        if !node.isQuoted {
            switch raw {
            case "true", "True", "TRUE": return "true"
            case "false", "False", "FALSE": return "false"
            default: break
            }
        }
        return raw
    }

    /// Keys of config entries holding a `$generate` token, in order: the one place that decides which keys
    /// are generated (the deployment model, deploy create, rotate-secrets and start read it from here).
    public var generatedKeys: [String] { config.filter(\.isGenerated).map(\.key) }

    /// Config entries without `$generate` tokens: what goes into config.env.
    public var plainConfig: [ConfigEntry] { config.filter { !$0.isGenerated } }
}
