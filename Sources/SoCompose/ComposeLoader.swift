import Foundation
import SoBasics

/// Reads compose files strictly: wrong types are errors with file:line, unknown keys are warnings with
/// a "did you mean", `x-` extensions pass silently.
public enum ComposeLoader {
    public static func load(_ path: String, fs: FileSystem, environment: [String: String]?, diagnostics: DiagnosticSink) throws -> ComposeFile {
        guard let root = try YAMLFile.load(path, fs: fs, what: "compose file") else {
            throw SoError("compose file is empty", hint: "a compose file has a services: section", at: SourceLocation(file: path))
        }
        return try decode(root, path: path, environment: environment, diagnostics: diagnostics)
    }

    public static func decode(_ root: YNode, path: String, environment: [String: String]?, diagnostics: DiagnosticSink) throws -> ComposeFile {
        var doc = root
        if let environment {
            doc = try root.mapScalarValues { text, line in
                guard text.contains("$") else { return text }
                do {
                    return try Interpolation.interpolate(text) { environment[$0] }
                } catch var e as SoError {
                    e.location = SourceLocation(file: path, line: line)
                    throw e
                }
            }
        }
        let m = try doc.mapping("compose file")
        _ = m.value("version")
        var file = ComposeFile(path: path)
        file.name = try m.string("name")
        guard let services = m.nonNull("services") else {
            throw doc.error("compose file has no services", hint: "add a services: section with at least one service")
        }
        for e in try services.entries("'services'") {
            try checkName(e.key, what: "service name", at: e.keyNode.location)
            file.services.append(try ServiceDecoder(node: e.value, name: e.key, line: e.keyNode.line, diagnostics: diagnostics).decode())
        }
        if let v = m.nonNull("volumes") {
            for e in try v.entries("'volumes'") {
                var vol = ComposeNamedVolume(name: e.key, line: e.keyNode.line)
                if !e.value.isNull {
                    let vm = try e.value.mapping("volume '\(e.key)'")
                    vol.external = try externalFlag(vm)
                    vm.accept(["driver", "driver_opts", "labels", "name", "external"])
                    vm.finish(into: diagnostics)
                }
                file.volumes.append(vol)
            }
        }
        if let n = m.nonNull("networks") { file.networks = try n.entries("'networks'").map(\.key) }
        file.secrets = try topLevelResources(m.nonNull("secrets"), what: "secrets", diagnostics: diagnostics)
        file.configs = try topLevelResources(m.nonNull("configs"), what: "configs", diagnostics: diagnostics)
        m.accept(["include", "models"])
        m.finish(into: diagnostics)
        return file
    }

    static func checkName(_ name: String, what: String, at location: SourceLocation) throws {
        guard name.range(of: #"^[A-Za-z0-9][A-Za-z0-9_.-]*$"#, options: .regularExpression) != nil else {
            throw SoError("invalid \(what) '\(name)'", hint: "use letters, digits, '-', '_' and '.'", at: location)
        }
    }

    static func externalFlag(_ m: MapReader) throws -> Bool {
        guard let e = m.nonNull("external") else { return false }
        if e.isMapping { return true }
        return try e.bool("'external'")
    }

    static func topLevelResources(_ node: YNode?, what: String, diagnostics: DiagnosticSink) throws -> [ComposeTopLevelResource] {
        guard let node else { return [] }
        return try node.entries("'\(what)'").map { e in
            var r = ComposeTopLevelResource(name: e.key, line: e.keyNode.line)
            if e.value.isNull { return r }
            let rm = try e.value.mapping("\(what).\(e.key)")
            r.file = try rm.string("file")
            r.environment = try rm.string("environment")
            r.content = try rm.string("content")
            r.external = try externalFlag(rm)
            rm.accept(["name", "labels", "driver", "driver_opts", "template_driver"])
            rm.finish(into: diagnostics)
            return r
        }
    }
}

/// Decodes one service mapping.
struct ServiceDecoder {
    let node: YNode
    let name: String
    let line: Int?
    let diagnostics: DiagnosticSink

    /// Keys of the compose spec that `so` accepts without modelling them one by one.
    static let otherKnown = [
        "container_name", "hostname", "domainname", "stop_signal", "stop_grace_period", "sysctls", "ulimits", "tmpfs", "shm_size", "init",
        "stdin_open", "tty", "platform", "runtime", "dns", "dns_search", "dns_opt", "logging", "pid", "ipc", "devices", "security_opt",
        "userns_mode", "mem_limit", "cpus", "mem_reservation", "cpu_shares", "pull_policy", "scale", "links", "external_links", "annotations",
        "attach", "blkio_config", "cgroup", "cgroup_parent", "cpu_count", "cpu_percent", "cpu_period", "cpu_quota", "cpu_rt_period",
        "cpu_rt_runtime", "cpuset", "credential_spec", "device_cgroup_rules", "develop", "driver_opts", "gpus", "group_add", "isolation",
        "mac_address", "mem_swappiness", "memswap_limit", "oom_kill_disable", "oom_score_adj", "pids_limit", "post_start", "pre_stop",
        "storage_opt", "uts", "volumes_from", "models", "provider", "use_api_socket", "label_file", "extends", "network", "memswap",
    ]

    func decode() throws -> ComposeService {
        var s = ComposeService(name: name, line: line)
        if node.isNull { return s }
        let m = try node.mapping("service '\(name)'")
        s.image = try m.string("image")
        if let b = m.nonNull("build") { s.build = try build(b) }
        if let e = m.nonNull("environment") { s.environment = try environment(e) }
        if let e = m.nonNull("env_file") { s.envFiles = try envFiles(e) }
        if let p = m.nonNull("ports") { s.ports = try p.sequence("'ports' of \(name)").flatMap { try ComposePorts.parse($0) } }
        if let e = m.nonNull("expose") { s.expose = try e.sequence("'expose'").map { try $0.string("an exposed port") } }
        if let v = m.nonNull("volumes") { s.volumes = try v.sequence("'volumes' of \(name)").map { try ComposeVolumes.parse($0, diagnostics: diagnostics) } }
        s.entrypoint = try m.nonNull("entrypoint").map { try command($0, what: "entrypoint") }
        s.command = try m.nonNull("command").map { try command($0, what: "command") }
        if let h = m.nonNull("healthcheck") { s.healthcheck = try healthcheck(h) }
        if let d = m.nonNull("depends_on") { s.dependsOn = try dependsOn(d) }
        if let d = m.nonNull("deploy") { s.deploy = try deploy(d) }
        s.user = try m.string("user")
        s.workingDir = try m.string("working_dir")
        if let l = m.nonNull("labels") { s.labels = try keyValues(l, what: "labels") }
        s.restart = try m.string("restart")
        s.networkMode = try m.string("network_mode")
        if let n = m.nonNull("networks") { s.networks = n.isSequence ? try n.stringList("'networks'") : try n.entries("'networks'").map(\.key) }
        if let r = m.nonNull("secrets") { s.secrets = try resourceRefs(r, what: "secrets") }
        if let r = m.nonNull("configs") { s.configs = try resourceRefs(r, what: "configs") }
        if let h = m.nonNull("extra_hosts") {
            s.extraHosts = h.isSequence ? try h.stringList("'extra_hosts'") : try h.entries("'extra_hosts'").map { "\($0.key):\(try $0.value.string("extra_hosts.\($0.key)"))" }
        }
        s.capAdd = try m.value("cap_add")?.stringList("'cap_add'") ?? []
        s.capDrop = try m.value("cap_drop")?.stringList("'cap_drop'") ?? []
        s.privileged = try m.bool("privileged")
        s.readOnly = try m.bool("read_only")
        s.profiles = try m.value("profiles")?.stringList("'profiles'") ?? []
        for key in Self.otherKnown { if let v = m.value(key) { s.otherKeys.append((key, v.line)) } }
        m.finish(into: diagnostics)
        return s
    }

    func build(_ n: YNode) throws -> ComposeBuild {
        if n.isScalar { return ComposeBuild(context: try n.string("'build'")) }
        let m = try n.mapping("'build' of \(name)")
        var b = ComposeBuild(context: try m.string("context") ?? ".")
        b.dockerfile = try m.string("dockerfile")
        b.target = try m.string("target")
        if let a = m.nonNull("args") { b.args = Dictionary(try keyValues(a, what: "build args").map { ($0.0, $0.1) }, uniquingKeysWith: { $1 }) }
        m.accept(["dockerfile_inline", "labels", "cache_from", "cache_to", "network", "shm_size", "extra_hosts", "isolation", "privileged",
                  "secrets", "ssh", "tags", "platforms", "ulimits", "additional_contexts", "no_cache", "pull", "entitlements", "provenance", "sbom"])
        m.finish(into: diagnostics)
        return b
    }

    func environment(_ n: YNode) throws -> [EnvEntry] {
        if n.isSequence {
            return try n.sequence("'environment' of \(name)").map { item in
                let text = try item.string("an environment entry")
                if let eq = text.firstIndex(of: "=") {
                    return EnvEntry(key: String(text[..<eq]), value: String(text[text.index(after: eq)...]), line: item.line)
                }
                return EnvEntry(key: text, value: nil, line: item.line)
            }
        }
        guard n.isMapping else {
            throw n.error("'environment' of \(name) must be a mapping or a list, not \(n.isScalar ? "'\(n.node.string ?? "")'" : "this")",
                          hint: "write KEY: value pairs, or a list of KEY=value")
        }
        return try n.entries("'environment' of \(name)").map { e in
            if e.value.isNull { return EnvEntry(key: e.key, value: nil, line: e.keyNode.line) }
            guard e.value.isScalar else {
                throw e.value.error("environment value of '\(e.key)' must be a single value", hint: "quote it as a string")
            }
            return EnvEntry(key: e.key, value: try e.value.string("environment value"), line: e.keyNode.line)
        }
    }

    func envFiles(_ n: YNode) throws -> [ComposeEnvFile] {
        if n.isScalar { return [ComposeEnvFile(path: try n.string("'env_file'"))] }
        return try n.sequence("'env_file'").map { item in
            if item.isScalar { return ComposeEnvFile(path: try item.string("an env_file entry")) }
            let im = try item.mapping("an env_file entry")
            let f = ComposeEnvFile(path: try im.required("path").string("'path'"), required: try im.bool("required") ?? true)
            im.accept(["format"])
            im.finish(into: diagnostics)
            return f
        }
    }

    func command(_ n: YNode, what: String) throws -> [String] {
        if n.isSequence { return try n.sequence("'\(what)'").map { try $0.isNull ? "" : $0.string("a \(what) word") } }
        let text = try n.string("'\(what)'")
        do { return try ShellWords.split(text) } catch var e as SoError {
            e.location = n.location
            throw e
        }
    }

    func healthcheck(_ n: YNode) throws -> ComposeHealthcheck {
        let m = try n.mapping("'healthcheck' of \(name)")
        var h = ComposeHealthcheck()
        if let t = m.nonNull("test") {
            h.test = t.isScalar ? ["CMD-SHELL", try t.string("'test'")] : try t.sequence("'test'").map { try $0.string("a test word") }
        }
        h.interval = try m.string("interval")
        h.timeout = try m.string("timeout")
        h.retries = try m.int("retries")
        h.startPeriod = try m.string("start_period")
        h.disable = try m.bool("disable") ?? false
        m.accept(["start_interval"])
        m.finish(into: diagnostics)
        return h
    }

    func dependsOn(_ n: YNode) throws -> [ComposeDependency] {
        if n.isSequence { return try n.stringList("'depends_on'").map { ComposeDependency(service: $0) } }
        return try n.entries("'depends_on'").map { e in
            if e.value.isNull { return ComposeDependency(service: e.key) }
            let dm = try e.value.mapping("depends_on.\(e.key)")
            let condition = try dm.string("condition") ?? "service_started"
            guard ["service_started", "service_healthy", "service_completed_successfully"].contains(condition) else {
                throw dm.value("condition")!.error("unknown depends_on condition '\(condition)'", hint: "use service_started, service_healthy or service_completed_successfully")
            }
            dm.accept(["restart", "required"])
            dm.finish(into: diagnostics)
            return ComposeDependency(service: e.key, condition: condition)
        }
    }

    func deploy(_ n: YNode) throws -> ComposeDeploy {
        let m = try n.mapping("'deploy' of \(name)")
        var d = ComposeDeploy(replicas: try m.int("replicas"))
        if let r = m.nonNull("resources") {
            let rm = try r.mapping("'deploy.resources'")
            func amounts(_ key: String) throws -> ComposeResources? {
                guard let a = rm.nonNull(key) else { return nil }
                let am = try a.mapping("'deploy.resources.\(key)'")
                let res = ComposeResources(cpus: try am.string("cpus"), memory: try am.string("memory"))
                am.accept(["pids", "devices", "generic_resources"])
                am.finish(into: diagnostics)
                return res
            }
            d.limits = try amounts("limits")
            d.reservations = try amounts("reservations")
            rm.finish(into: diagnostics)
        }
        m.accept(["mode", "endpoint_mode", "labels", "placement", "restart_policy", "rollback_config", "update_config"])
        m.finish(into: diagnostics)
        return d
    }

    func keyValues(_ n: YNode, what: String) throws -> [(String, String)] {
        if n.isSequence {
            return try n.sequence("'\(what)'").map { item in
                let t = try item.string("a \(what) entry")
                if let eq = t.firstIndex(of: "=") { return (String(t[..<eq]), String(t[t.index(after: eq)...])) }
                return (t, "")
            }
        }
        return try n.entries("'\(what)'").map { ($0.key, $0.value.isNull ? "" : try $0.value.string("\(what).\($0.key)")) }
    }

    func resourceRefs(_ n: YNode, what: String) throws -> [ComposeServiceResourceRef] {
        try n.sequence("'\(what)' of \(name)").map { item in
            if item.isScalar { return ComposeServiceResourceRef(source: try item.string("a \(what) entry")) }
            let rm = try item.mapping("a \(what) entry")
            let r = ComposeServiceResourceRef(source: try rm.required("source").string("'source'"), target: try rm.string("target"), mode: try rm.string("mode"))
            rm.accept(["uid", "gid"])
            rm.finish(into: diagnostics)
            return r
        }
    }
}
