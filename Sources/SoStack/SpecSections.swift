import Foundation
import SoBasics

/// The spec keys used when rendering, decoded strictly (shapes and types checked at file:line).
///
/// Small like `Spec`, for the same reason: its keys (`SpecSectionFields`, read and written as
/// `spec.sections.quota`) live in one copy-on-write box. Inline they were 489 bytes, and every read of
/// `spec.sections.x` in a debug build copied them to a temporary of its caller's frame (issue 67).
@dynamicMemberLookup
public struct SpecSections: Sendable {
    private var fields = CopyOnWrite(SpecSectionFields())

    public init() {}

    public subscript<T>(dynamicMember key: WritableKeyPath<SpecSectionFields, T>) -> T {
        get { fields.value[keyPath: key] }
        _modify { yield &fields.value[keyPath: key] }
    }
}

extension SpecSections {
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
        if let e = m.nonNull("external-services") {
            s.externalServices = try decodeExternalServices(e, diagnostics: diagnostics)
        }
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
                    out.containers[e.key] = try containerResources(
                        e.value, what: "resources.containers.\(e.key)", diagnostics: diagnostics)
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
                    out.volumeStorage[e.key] = try storage(
                        e.value, what: "resources.volumes.\(e.key)", diagnostics: diagnostics)
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
                throw ps.error(
                    "pod-security '\(v)' is not a Pod Security level", hint: "use baseline, restricted or privileged")
            }
            out.podSecurity = v
        }
        if let u = sm.nonNull("run-as-user") {
            let v = try u.int("'security.run-as-user'")
            guard v > 0 else {
                throw u.error("run-as-user must be a uid above 0", hint: "non-root pods need a uid such as 1000")
            }
            out.runAsUser = v
        }
        sm.finish(into: diagnostics)
        return out
    }

    /// `egress:` with `egress-ports:` and `egress-proxy:` (nil: no egress list; a proxy then is an error).
    static func decodeEgress(_ m: MapReader) throws -> EgressPolicy? {
        guard let e = m.value("egress") else {
            if let p = m.nonNull("egress-proxy") {
                throw p.error(
                    "egress-proxy needs an egress: list",
                    hint: "add egress: with the hosts the proxy may reach, or remove egress-proxy:")
            }
            return nil
        }
        var policy = EgressPolicy()
        for (i, item) in try (e.isNull ? [] : e.sequence("'egress'")).enumerated() {
            let v = try item.string("egress[\(i)]")
            guard EgressPolicy.valid(v) else {
                throw item.error(
                    "egress entry '\(v)' is neither a host name, a URL nor a CIDR",
                    hint: "write a host such as api.anthropic.com, a CIDR such as 10.0.0.0/8, or ${GIT_REPO}")
            }
            policy.entries.append(v)
        }
        if let p = m.nonNull("egress-ports") {
            policy.ports = try p.sequence("'egress-ports'").map { n in
                let port = try n.int("an egress port")
                guard (1...65535).contains(port) else {
                    throw n.error("egress port \(port) is out of range", hint: "use 1-65535")
                }
                return port
            }
        }
        if let p = m.nonNull("egress-proxy") {
            let name = try p.string("'egress-proxy'")
            guard NameRules.isComponent(name) else {
                throw p.error(
                    "egress-proxy '\(name)' is not a service name",
                    hint: "name the compose service that runs the proxy, e.g. egress-proxy")
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
            s.imagePullSecret = ImagePullSecret(
                server: try pm.required("server").string("'server'"),
                username: try pm.required("username").string("'username'"),
                tokenEnv: try pm.string("token-env"), tokenFile: try pm.string("token-file"), line: p.line)
            if s.imagePullSecret?.tokenEnv == nil && s.imagePullSecret?.tokenFile == nil {
                throw p.error(
                    "'image-pull-secret' needs token-env or token-file",
                    hint: "name the environment variable or the file holding the registry token")
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
            s.imageOverrides = try o.entries("'image-overrides'").map {
                ($0.key, try $0.value.string("image override of \($0.key)"))
            }
        }
    }

    /// `node-affinities:` and `node-tolerations:`.
    static func decodeScheduling(_ m: MapReader, into s: inout SpecSections, diagnostics: DiagnosticSink) throws {
        for (i, a) in try (m.nonNull("node-affinities")?.sequence("'node-affinities'") ?? []).enumerated() {
            let am = try a.mapping("node-affinities[\(i)]")
            s.nodeAffinities.append(
                NodeAffinity(
                    label: try am.required("label").string("'label'"), value: try am.required("value").string("'value'")
                ))
            am.finish(into: diagnostics)
        }
        for (i, t) in try (m.nonNull("node-tolerations")?.sequence("'node-tolerations'") ?? []).enumerated() {
            let tm = try t.mapping("node-tolerations[\(i)]")
            s.nodeTolerations.append(
                NodeToleration(key: try tm.required("key").string("'key'"), value: try tm.string("value")))
            tm.finish(into: diagnostics)
        }
    }

    /// `external-services:`: each needs a host, an ip or a service.
    static func decodeExternalServices(_ e: YNode, diagnostics: DiagnosticSink) throws -> [ExternalService] {
        var out: [ExternalService] = []
        for entry in try e.entries("'external-services'") {
            let em = try entry.value.mapping("external-services.\(entry.key)")
            let svc = ExternalService(
                name: entry.key, host: try em.string("host"), ip: try em.string("ip"),
                port: try em.required("port").int("'port'"),
                service: try em.string("selector") ?? em.string("service"), namespace: try em.string("namespace"))
            if svc.host == nil && svc.ip == nil && svc.service == nil {
                throw entry.value.error(
                    "external service '\(entry.key)' needs host, ip or service",
                    hint: "e.g. {host: db.example.org, port: 5432}")
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
        return v.count <= 253 && labels.count >= 2
            && labels.allSatisfy { l in
                !l.isEmpty && l.count <= 63 && l.first != "-" && l.last != "-"
                    && l.allSatisfy { $0.isLetter && $0.isASCII || $0.isNumber || $0 == "-" }
            } && labels.last?.allSatisfy(\.isNumber) != true
    }

    static func containerResources(_ n: YNode, what: String, diagnostics: DiagnosticSink) throws -> ContainerResources {
        let m = try n.mapping("'\(what)'")
        func amounts(_ key: String) throws -> ResourceAmounts? {
            guard let v = m.nonNull(key) else { return nil }
            let am = try v.mapping("'\(what).\(key)'")
            let r = ResourceAmounts(
                cpus: try QuantityCheck.cpu(am, "cpus", what: "\(what).\(key).cpus"),
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
        guard let r = m.nonNull("reservations") else {
            m.finish(into: diagnostics)
            return nil
        }
        let rm = try r.mapping("'\(what).reservations'")
        let v = try QuantityCheck.storage(rm, "storage", what: "\(what).reservations.storage")
        rm.finish(into: diagnostics)
        m.finish(into: diagnostics)
        return v
    }

    static func stringMap(_ n: YNode?, what: String) throws -> [(String, String)] {
        guard let n else { return [] }
        return try n.entries("'\(what)'").map {
            ($0.key, try $0.value.isNull ? "" : $0.value.string("\(what).\($0.key)"))
        }
    }
}
