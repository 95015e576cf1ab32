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
    public init() {}
}

public struct ImagePullSecret: Sendable, Equatable {
    public var server: String
    public var username: String
    public var tokenEnv: String?
    public var tokenFile: String?
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
    public var acmeEmail: String?
    public init() {}

    static func decode(_ m: MapReader, diagnostics: DiagnosticSink) throws -> SpecSections {
        var s = SpecSections()
        if let r = m.nonNull("resources") {
            let rm = try r.mapping("'resources'")
            if let c = rm.nonNull("containers") {
                let cm = try c.mapping("'resources.containers'")
                if cm.keys.contains("reservations") || cm.keys.contains("limits") {
                    s.resources.containersGlobal = try containerResources(c, what: "resources.containers", diagnostics: diagnostics)
                } else {
                    for e in cm.entries { s.resources.containers[e.key] = try containerResources(e.value, what: "resources.containers.\(e.key)", diagnostics: diagnostics) }
                    cm.accept(cm.keys)
                }
            }
            if let v = rm.nonNull("volumes") {
                let vm = try v.mapping("'resources.volumes'")
                if vm.keys.contains("reservations") {
                    s.resources.volumeStorageGlobal = try storage(v, what: "resources.volumes", diagnostics: diagnostics)
                } else {
                    for e in vm.entries { s.resources.volumeStorage[e.key] = try storage(e.value, what: "resources.volumes.\(e.key)", diagnostics: diagnostics) }
                }
            }
            rm.finish(into: diagnostics)
        }
        if let sec = m.nonNull("security") {
            let sm = try sec.mapping("'security'")
            s.security.privileged = try sm.bool("privileged") ?? false
            s.security.capabilities = try sm.value("capabilities")?.stringList("'security.capabilities'") ?? []
            s.security.unlimitedMemlock = try sm.bool("unlimited-memlock") ?? false
            s.security.runtimeClass = try sm.string("runtime-class")
            if let ps = sm.nonNull("pod-security") {
                let v = try ps.string("'security.pod-security'")
                guard ["baseline", "restricted", "privileged"].contains(v) else {
                    throw ps.error("pod-security '\(v)' is not a Pod Security level", hint: "use baseline, restricted or privileged")
                }
                s.security.podSecurity = v
            }
            sm.finish(into: diagnostics)
        }
        if let rc = m.nonNull("runtime-class") { s.security.runtimeClass = try rc.string("'runtime-class'") }
        if let p = m.nonNull("image-pull-secret") {
            let pm = try p.mapping("'image-pull-secret'")
            s.imagePullSecret = ImagePullSecret(server: try pm.required("server").string("'server'"), username: try pm.required("username").string("'username'"),
                                                tokenEnv: try pm.string("token-env"), tokenFile: try pm.string("token-file"))
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
        s.annotations = try stringMap(m.nonNull("annotations"), what: "annotations")
        s.labels = try stringMap(m.nonNull("labels"), what: "labels")
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
        if let e = m.nonNull("external-services") {
            for entry in try e.entries("'external-services'") {
                let em = try entry.value.mapping("external-services.\(entry.key)")
                let svc = ExternalService(name: entry.key, host: try em.string("host"), ip: try em.string("ip"), port: try em.required("port").int("'port'"),
                                          service: try em.string("selector") ?? em.string("service"), namespace: try em.string("namespace"))
                if svc.host == nil && svc.ip == nil && svc.service == nil {
                    throw entry.value.error("external service '\(entry.key)' needs host, ip or service", hint: "e.g. {host: db.example.org, port: 5432}")
                }
                em.finish(into: diagnostics)
                s.externalServices.append(svc)
            }
        }
        s.caCertificates = try m.value("ca-certificates")?.stringList("'ca-certificates'") ?? []
        s.ingressClass = try m.string("ingress-class")
        s.maintenanceService = try m.string("maintenance-service")
        s.caddyIngressImage = try m.string("caddy-ingress-image")
        return s
    }

    static func containerResources(_ n: YNode, what: String, diagnostics: DiagnosticSink) throws -> ContainerResources {
        let m = try n.mapping("'\(what)'")
        func amounts(_ key: String) throws -> ResourceAmounts? {
            guard let v = m.nonNull(key) else { return nil }
            let am = try v.mapping("'\(what).\(key)'")
            let r = ResourceAmounts(cpus: try am.string("cpus"), memory: try am.string("memory"))
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
        let v = try rm.string("storage")
        rm.finish(into: diagnostics)
        m.finish(into: diagnostics)
        return v
    }

    static func stringMap(_ n: YNode?, what: String) throws -> [(String, String)] {
        guard let n else { return [] }
        return try n.entries("'\(what)'").map { ($0.key, try $0.value.isNull ? "" : $0.value.string("\(what).\($0.key)")) }
    }
}
