import Foundation
import SoBasics

/// CPU and memory for one container (compose `deploy.resources` shape: cpus, memory).
public struct ResourceAmounts: Sendable, Equatable {
    public var cpus: String?
    public var memory: String?
    public init(cpus: String? = nil, memory: String? = nil) {
        self.cpus = cpus
        self.memory = memory
    }
}

public struct ContainerResources: Sendable, Equatable {
    public var reservations: ResourceAmounts?
    public var limits: ResourceAmounts?
    public init(reservations: ResourceAmounts? = nil, limits: ResourceAmounts? = nil) {
        self.reservations = reservations
        self.limits = limits
    }
}

/// `resources:` of a spec: global or per-container CPU/memory, global or per-volume storage.
public struct SpecResources: Sendable, Equatable {
    public var containersGlobal: ContainerResources?
    public var containers: [String: ContainerResources] = [:]
    public var volumeStorageGlobal: String?
    public var volumeStorage: [String: String] = [:]
    public init() {}
}

public struct SpecSecurity: Sendable, Equatable {
    public var privileged = false
    public var capabilities: [String] = []
    public var unlimitedMemlock = false
    public var runtimeClass: String?
    /// Pod Security admission level for the namespace: baseline (default), restricted or privileged.
    public var podSecurity: String?
    /// uid (and gid, fsGroup) pods run as under `restricted` (default 1000).
    public var runAsUser: Int?
    public init() {}
}

/// `egress:` — when present, the namespace denies all traffic except within itself, DNS, and egress
/// to these hosts (resolved to addresses at start) or CIDRs, on `egress-ports` (default 443, 22, 80).
public struct EgressPolicy: Sendable, Equatable {
    /// As written: host names, CIDRs, URLs (`https://host/…`, `git@host:…`) or `${CONFIG_NAME}` holding one.
    public var entries: [String] = []
    public var ports: [Int] = [443, 22, 80]
    /// `egress-proxy: SERVICE`: the compose service (in a pod of its own) that proxies HTTP(S) to the listed
    /// hosts by name; its pods may reach any address on the allowed ports, the others go through it.
    public var proxy: String?
    public init() {}

    /// Host names and CIDRs, with `${NAME}` expanded from the deployment's config and URLs reduced to
    /// their host; an entry that expands to nothing is dropped.
    public func targets(config: [String: String]) -> (hosts: [String], cidrs: [String]) {
        var hosts: [String] = [], cidrs: [String] = []
        for raw in entries {
            guard let t = Self.target(Self.expand(raw, config: config)) else { continue }
            if SpecSections.isCIDR(t) {
                let c = t.contains("/") ? t : t + (t.contains(":") ? "/128" : "/32")
                if !cidrs.contains(c) { cidrs.append(c) }
            } else if !hosts.contains(t) {
                hosts.append(t)
            }
        }
        return (hosts, cidrs)
    }

    /// The ports URLs name beyond `ports`, by target (host or CIDR, as `targets` gives them): a URL's own
    /// `:port`, else its scheme's (`git://` 9418, `ssh://` 22, `http://` 80, `https://` 443).
    public func urlPorts(config: [String: String]) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for raw in entries {
            let v = Self.expand(raw, config: config).trimmedSpaces
            guard let scheme = v.range(of: "://"), let t = Self.target(v) else { continue }
            let key = SpecSections.isCIDR(t) && !t.contains("/") ? t + (t.contains(":") ? "/128" : "/32") : t
            var authority = String(v[scheme.upperBound...].prefix { $0 != "/" })
            if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
            let explicit = authority.hasPrefix("[") ? authority.split(separator: "]").dropFirst().first.flatMap { Int($0.dropFirst()) }
                : authority.split(separator: ":").dropFirst().first.flatMap { Int($0) }
            let defaults = ["git": 9418, "ssh": 22, "git+ssh": 22, "http": 80, "https": 443]
            guard let port = explicit ?? defaults[v[..<scheme.lowerBound].lowercased()], (1...65535).contains(port), !ports.contains(port) else { continue }
            if !(out[key] ?? []).contains(port) { out[key, default: []].append(port) }
        }
        return out
    }

    /// `${NAME}` (and `${NAME:-…}`) replaced by the deployment's config value, or nothing.
    static func expand(_ raw: String, config: [String: String]) -> String {
        var v = raw
        while let open = v.range(of: "${"), let close = v.range(of: "}", range: open.upperBound..<v.endIndex) {
            let name = String(v[open.upperBound..<close.lowerBound]).split(separator: ":").first.map(String.init) ?? ""
            v.replaceSubrange(open.lowerBound..<close.upperBound, with: config[name] ?? "")
        }
        return v
    }

    /// `https://user@host:443/path` → host; `git@host:org/repo` → host; a host or CIDR as is.
    static func target(_ value: String) -> String? {
        var v = value.trimmedSpaces
        if v.isEmpty { return nil }
        if let scheme = v.range(of: "://") { v = String(v[scheme.upperBound...]) }
        else if v.contains("@"), let colon = v.firstIndex(of: ":"), v.firstIndex(of: "/").map({ $0 > colon }) ?? true { v = String(v[..<colon]) }
        if SpecSections.isCIDR(v) { return v }
        if let slash = v.firstIndex(of: "/") { v = String(v[..<slash]) }
        if let at = v.lastIndex(of: "@") { v = String(v[v.index(after: at)...]) }
        if v.hasPrefix("["), let close = v.firstIndex(of: "]") { return String(v[v.index(after: v.startIndex)..<close]).lowercased() }  // [IPv6]:port
        if let colon = v.firstIndex(of: ":") { v = String(v[..<colon]) }
        return v.isEmpty ? nil : v.lowercased()
    }

    /// An entry is acceptable when it is a CIDR, a host, a URL or refers to config.
    static func valid(_ v: String) -> Bool {
        if v.contains("${") { return true }
        guard let t = target(v) else { return false }
        return SpecSections.isCIDR(t) || SpecSections.isHostName(t)
    }
}

/// `quota:` — a ResourceQuota for the namespace and a LimitRange with container defaults.
public struct NamespaceQuota: Sendable, Equatable {
    public var cpu: String?
    public var memory: String?
    public var storage: String?
    public var pods: Int?
    public init() {}
}

public struct ImagePullSecret: Sendable, Equatable {
    public var server: String
    public var username: String
    public var tokenEnv: String?
    public var tokenFile: String?
    /// spec.yml line of `image-pull-secret:`, for errors at start.
    public var line: Int?
}

public struct NodeAffinity: Sendable, Equatable {
    public var label: String
    public var value: String
}

public struct NodeToleration: Sendable, Equatable {
    public var key: String
    public var value: String?
}

public struct ExternalService: Sendable, Equatable {
    public var name: String
    public var host: String?
    public var ip: String?
    public var port: Int
    public var service: String?
    public var namespace: String?
}

/// The spec keys used when rendering, decoded strictly (shapes and types checked at file:line).
public struct SpecSections: Sendable {
    public var resources = SpecResources()
    public var security = SpecSecurity()
    public var imagePullSecret: ImagePullSecret?
    public var imagePullPolicy: String?
    public var imageOverrides: [(container: String, image: String)] = []
    public var annotations: [(String, String)] = []
    public var labels: [(String, String)] = []
    public var nodeAffinities: [NodeAffinity] = []
    public var nodeTolerations: [NodeToleration] = []
    public var externalServices: [ExternalService] = []
    public var caCertificates: [String] = []
    public var ingressClass: String?
    public var maintenanceService: String?
    public var caddyIngressImage: String?
    /// The image of the init containers that make a plain compose service wait for its `depends_on` (it
    /// needs `sh` and `nc`); nil: `busybox:1.36`.
    public var waitImage: String?
    public var acmeEmail: String?
    public var egress: EgressPolicy?
    public var quota: NamespaceQuota?
    public init() {}

    static func decode(_ m: MapReader, diagnostics: DiagnosticSink) throws -> SpecSections {
        var s = SpecSections()
        if let r = m.nonNull("resources") { s.resources = try decodeResources(r, diagnostics: diagnostics) }
        if let sec = m.nonNull("security") { s.security = try decodeSecurity(sec, diagnostics: diagnostics) }
        s.egress = try decodeEgress(m)
        s.quota = try decodeQuota(m.nonNull("quota"), diagnostics: diagnostics)
        if let rc = m.nonNull("runtime-class") { s.security.runtimeClass = try rc.string("'runtime-class'") }
        try decodeImages(m, into: &s, diagnostics: diagnostics)
        s.annotations = try stringMap(m.nonNull("annotations"), what: "annotations")
        s.labels = try stringMap(m.nonNull("labels"), what: "labels")
        try decodeScheduling(m, into: &s, diagnostics: diagnostics)
        if let e = m.nonNull("external-services") { s.externalServices = try decodeExternalServices(e, diagnostics: diagnostics) }
        s.caCertificates = try m.value("ca-certificates")?.stringList("'ca-certificates'") ?? []
        s.ingressClass = try m.string("ingress-class")
        s.maintenanceService = try m.string("maintenance-service")
        s.caddyIngressImage = try m.string("caddy-ingress-image")
        s.waitImage = try m.string("wait-image")
        return s
    }

    /// `resources:`: containers' CPU and memory (global or per container), volumes' storage (global or per volume).
    static func decodeResources(_ r: YNode, diagnostics: DiagnosticSink) throws -> SpecResources {
        var out = SpecResources()
        let rm = try r.mapping("'resources'")
        if let c = rm.nonNull("containers") {
            let cm = try c.mapping("'resources.containers'")
            if cm.keys.contains("reservations") || cm.keys.contains("limits") {
                out.containersGlobal = try containerResources(c, what: "resources.containers", diagnostics: diagnostics)
            } else {
                for e in cm.entries {
                    out.containers[e.key] = try containerResources(e.value, what: "resources.containers.\(e.key)", diagnostics: diagnostics)
                }
                cm.accept(cm.keys)
            }
        }
        if let v = rm.nonNull("volumes") {
            let vm = try v.mapping("'resources.volumes'")
            if vm.keys.contains("reservations") {
                out.volumeStorageGlobal = try storage(v, what: "resources.volumes", diagnostics: diagnostics)
            } else {
                for e in vm.entries {
                    out.volumeStorage[e.key] = try storage(e.value, what: "resources.volumes.\(e.key)", diagnostics: diagnostics)
                }
            }
        }
        rm.finish(into: diagnostics)
        return out
    }

    /// `security:`: privileges, capabilities, memlock, runtime class, Pod Security level and uid.
    static func decodeSecurity(_ sec: YNode, diagnostics: DiagnosticSink) throws -> SpecSecurity {
        var out = SpecSecurity()
        let sm = try sec.mapping("'security'")
        out.privileged = try sm.bool("privileged") ?? false
        out.capabilities = try sm.value("capabilities")?.stringList("'security.capabilities'") ?? []
        out.unlimitedMemlock = try sm.bool("unlimited-memlock") ?? false
        out.runtimeClass = try sm.string("runtime-class")
        if let ps = sm.nonNull("pod-security") {
            let v = try ps.string("'security.pod-security'")
            guard ["baseline", "restricted", "privileged"].contains(v) else {
                throw ps.error("pod-security '\(v)' is not a Pod Security level", hint: "use baseline, restricted or privileged")
            }
            out.podSecurity = v
        }
        if let u = sm.nonNull("run-as-user") {
            let v = try u.int("'security.run-as-user'")
            guard v > 0 else { throw u.error("run-as-user must be a uid above 0", hint: "non-root pods need a uid such as 1000") }
            out.runAsUser = v
        }
        sm.finish(into: diagnostics)
        return out
    }

    /// `egress:` with `egress-ports:` and `egress-proxy:` (nil: no egress list; a proxy then is an error).
    static func decodeEgress(_ m: MapReader) throws -> EgressPolicy? {
        guard let e = m.value("egress") else {
            if let p = m.nonNull("egress-proxy") {
                throw p.error("egress-proxy needs an egress: list", hint: "add egress: with the hosts the proxy may reach, or remove egress-proxy:")
            }
            return nil
        }
        var policy = EgressPolicy()
        for (i, item) in try (e.isNull ? [] : e.sequence("'egress'")).enumerated() {
            let v = try item.string("egress[\(i)]")
            guard EgressPolicy.valid(v) else {
                throw item.error("egress entry '\(v)' is neither a host name, a URL nor a CIDR",
                                 hint: "write a host such as api.anthropic.com, a CIDR such as 10.0.0.0/8, or ${GIT_REPO}")
            }
            policy.entries.append(v)
        }
        if let p = m.nonNull("egress-ports") {
            policy.ports = try p.sequence("'egress-ports'").map { n in
                let port = try n.int("an egress port")
                guard (1...65535).contains(port) else { throw n.error("egress port \(port) is out of range", hint: "use 1-65535") }
                return port
            }
        }
        if let p = m.nonNull("egress-proxy") {
            let name = try p.string("'egress-proxy'")
            guard NameRules.isComponent(name) else {
                throw p.error("egress-proxy '\(name)' is not a service name", hint: "name the compose service that runs the proxy, e.g. egress-proxy")
            }
            policy.proxy = name
        }
        return policy
    }

    /// `quota:` (nil when absent).
    static func decodeQuota(_ q: YNode?, diagnostics: DiagnosticSink) throws -> NamespaceQuota? {
        guard let q else { return nil }
        let qm = try q.mapping("'quota'")
        var quota = NamespaceQuota()
        quota.cpu = try qm.string("cpu")
        quota.memory = try qm.string("memory")
        quota.storage = try qm.string("storage")
        quota.pods = try qm.int("pods")
        qm.finish(into: diagnostics)
        return quota
    }

    /// `image-pull-secret:`, `image-pull-policy:` and `image-overrides:`.
    static func decodeImages(_ m: MapReader, into s: inout SpecSections, diagnostics: DiagnosticSink) throws {
        if let p = m.nonNull("image-pull-secret") {
            let pm = try p.mapping("'image-pull-secret'")
            s.imagePullSecret = ImagePullSecret(server: try pm.required("server").string("'server'"),
                                                username: try pm.required("username").string("'username'"),
                                                tokenEnv: try pm.string("token-env"), tokenFile: try pm.string("token-file"), line: p.line)
            if s.imagePullSecret?.tokenEnv == nil && s.imagePullSecret?.tokenFile == nil {
                throw p.error("'image-pull-secret' needs token-env or token-file", hint: "name the environment variable or the file holding the registry token")
            }
            pm.finish(into: diagnostics)
        }
        if let p = m.nonNull("image-pull-policy") {
            let v = try p.string("'image-pull-policy'")
            guard ["Always", "IfNotPresent", "Never"].contains(v) else {
                throw p.error("image-pull-policy '\(v)' is not valid", hint: "use Always, IfNotPresent or Never")
            }
            s.imagePullPolicy = v
        }
        if let o = m.nonNull("image-overrides") {
            s.imageOverrides = try o.entries("'image-overrides'").map { ($0.key, try $0.value.string("image override of \($0.key)")) }
        }
    }

    /// `node-affinities:` and `node-tolerations:`.
    static func decodeScheduling(_ m: MapReader, into s: inout SpecSections, diagnostics: DiagnosticSink) throws {
        for (i, a) in try (m.nonNull("node-affinities")?.sequence("'node-affinities'") ?? []).enumerated() {
            let am = try a.mapping("node-affinities[\(i)]")
            s.nodeAffinities.append(NodeAffinity(label: try am.required("label").string("'label'"), value: try am.required("value").string("'value'")))
            am.finish(into: diagnostics)
        }
        for (i, t) in try (m.nonNull("node-tolerations")?.sequence("'node-tolerations'") ?? []).enumerated() {
            let tm = try t.mapping("node-tolerations[\(i)]")
            s.nodeTolerations.append(NodeToleration(key: try tm.required("key").string("'key'"), value: try tm.string("value")))
            tm.finish(into: diagnostics)
        }
    }

    /// `external-services:`: each needs a host, an ip or a service.
    static func decodeExternalServices(_ e: YNode, diagnostics: DiagnosticSink) throws -> [ExternalService] {
        var out: [ExternalService] = []
        for entry in try e.entries("'external-services'") {
            let em = try entry.value.mapping("external-services.\(entry.key)")
            let svc = ExternalService(name: entry.key, host: try em.string("host"), ip: try em.string("ip"), port: try em.required("port").int("'port'"),
                                      service: try em.string("selector") ?? em.string("service"), namespace: try em.string("namespace"))
            if svc.host == nil && svc.ip == nil && svc.service == nil {
                throw entry.value.error("external service '\(entry.key)' needs host, ip or service", hint: "e.g. {host: db.example.org, port: 5432}")
            }
            em.finish(into: diagnostics)
            out.append(svc)
        }
        return out
    }

    public static func isCIDR(_ v: String) -> Bool {
        let parts = v.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return false }
        if parts.count == 2 { guard let bits = Int(parts[1]), (0...128).contains(bits) else { return false } }
        let host = String(parts[0])
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        if octets.count == 4 && octets.allSatisfy({ Int($0).map { (0...255).contains($0) } ?? false }) { return true }
        return host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" }
    }

    public static func isHostName(_ v: String) -> Bool {
        let labels = v.split(separator: ".", omittingEmptySubsequences: false)
        return v.count <= 253 && labels.count >= 2 && labels.allSatisfy { l in
            !l.isEmpty && l.count <= 63 && l.first != "-" && l.last != "-" && l.allSatisfy { $0.isLetter && $0.isASCII || $0.isNumber || $0 == "-" }
        } && labels.last?.allSatisfy(\.isNumber) != true
    }

    static func containerResources(_ n: YNode, what: String, diagnostics: DiagnosticSink) throws -> ContainerResources {
        let m = try n.mapping("'\(what)'")
        func amounts(_ key: String) throws -> ResourceAmounts? {
            guard let v = m.nonNull(key) else { return nil }
            let am = try v.mapping("'\(what).\(key)'")
            let r = ResourceAmounts(cpus: try QuantityCheck.cpu(am, "cpus", what: "\(what).\(key).cpus"),
                                    memory: try QuantityCheck.memory(am, "memory", what: "\(what).\(key).memory"))
            am.finish(into: diagnostics)
            return r
        }
        let r = ContainerResources(reservations: try amounts("reservations"), limits: try amounts("limits"))
        m.finish(into: diagnostics)
        return r
    }

    static func storage(_ n: YNode, what: String, diagnostics: DiagnosticSink) throws -> String? {
        let m = try n.mapping("'\(what)'")
        guard let r = m.nonNull("reservations") else { m.finish(into: diagnostics); return nil }
        let rm = try r.mapping("'\(what).reservations'")
        let v = try QuantityCheck.storage(rm, "storage", what: "\(what).reservations.storage")
        rm.finish(into: diagnostics)
        m.finish(into: diagnostics)
        return v
    }

    static func stringMap(_ n: YNode?, what: String) throws -> [(String, String)] {
        guard let n else { return [] }
        return try n.entries("'\(what)'").map { ($0.key, try $0.value.isNull ? "" : $0.value.string("\(what).\($0.key)")) }
    }
}
