import Foundation
import SoBasics

/// Decodes one service mapping.
struct ServiceDecoder {
    let node: YNode
    let name: String
    let line: Int?
    let diagnostics: DiagnosticSink
    /// The file's values were interpolated: ports are parsed now; otherwise they stay entries (their text
    /// may hold `${VAR}`) until the deployment's values are known.
    var interpolated = true

    /// Compose-spec service keys that `so` accepts without modelling them (listed in `otherKeys`).
    static let otherKnown = [
        "annotations", "attach", "blkio_config", "cgroup", "cgroup_parent", "container_name", "cpu_count",
        "cpu_percent",
        "cpu_period", "cpu_quota", "cpu_rt_period", "cpu_rt_runtime", "cpu_shares", "cpus", "cpuset", "credential_spec",
        "develop", "device_cgroup_rules", "devices", "dns", "dns_opt", "dns_search", "domainname", "extends",
        "external_links",
        "gpus", "group_add", "hostname", "init", "ipc", "isolation", "label_file", "links", "logging", "mac_address",
        "mem_limit", "mem_reservation", "mem_swappiness", "memswap_limit", "models", "oom_kill_disable",
        "oom_score_adj",
        "pid", "pids_limit", "platform", "post_start", "pre_stop", "provider", "pull_policy", "pull_refresh_after",
        "runtime", "scale", "security_opt", "shm_size", "stdin_open", "stop_grace_period", "stop_signal", "storage_opt",
        "sysctls", "tmpfs", "tty", "ulimits", "use_api_socket", "userns_mode", "uts", "volume_driver", "volumes_from",
    ]

    /// Two mounts at one path: compose refuses it ("duplicate mount point"), and so does the API server
    /// ("must be unique"), so it is refused here, naming both lines.
    func refuseDuplicateTargets(_ mounts: [ComposeVolumeMount], nodes: [YNode]) throws {
        var seen: [String: Int?] = [:]
        for (mount, node) in zip(mounts, nodes) {
            var target = mount.target
            while target.count > 1 && target.hasSuffix("/") { target.removeLast() }
            if let first = seen[target] {
                throw node.error(
                    "service '\(name)' mounts \(target) twice (lines \(first.map(String.init) ?? "?") and "
                        + "\(node.line.map(String.init) ?? "?"))",
                    hint: "keep one of the two volumes entries at \(target), or give one another path")
            }
            seen[target] = node.line
        }
    }

    /// The service, its keys read in parts (each part a function of its own: a debug build gives every local and
    /// temporary a slot of the frame, and one function of all the keys took 14 KiB of the deepest load path's
    /// stack, issue 67).
    func decode() throws -> ComposeService {
        var s = ComposeService(name: name, line: line)
        if node.isNull { return s }
        let m = try node.mapping("service '\(name)'")
        try decodeImageAndMounts(m, into: &s)
        try decodeProcess(m, into: &s)
        try decodeSecurity(m, into: &s)
        try decodeLongTail(m, into: &s)
        s.otherKeys = m.entries.filter { Self.otherKnown.contains($0.key) }.map { ($0.key, $0.value.line) }
        s.keys = m.entries.filter { !$0.key.hasPrefix("x-") }.map { ($0.key, $0.keyNode.line) }
        m.accept(Self.otherKnown)
        m.finish(into: diagnostics)
        return s
    }

    /// image, build, environment, env_file, ports, expose, volumes.
    func decodeImageAndMounts(_ m: MapReader, into s: inout ComposeService) throws {
        s.image = try m.string("image")
        s.build = try m.nonNull("build").map(build)
        s.environment = try m.nonNull("environment").map(environment) ?? []
        s.envFiles = try m.nonNull("env_file").map(envFiles) ?? []
        let ports = try m.nonNull("ports")?.sequence("'ports' of service '\(name)'") ?? []
        s.portEntries = try ports.map(ComposePorts.entry)
        let expose = try m.nonNull("expose")?.sequence("'expose' of service '\(name)'") ?? []
        if interpolated {
            s.ports = try ports.flatMap { try ComposePorts.parse($0, diagnostics: diagnostics) }
            s.expose = try expose.flatMap(ComposePorts.parseExpose)
        }
        let volumeNodes = try m.nonNull("volumes")?.sequence("'volumes' of service '\(name)'") ?? []
        s.volumes = try volumeNodes.map { try ComposeVolumes.parse($0, diagnostics: diagnostics) }
        try refuseDuplicateTargets(s.volumes, nodes: volumeNodes)
    }

    /// entrypoint, command, healthcheck, depends_on, deploy (and the legacy resource keys), user, working_dir,
    /// labels, restart, network_mode, networks, secrets, configs, extra_hosts.
    func decodeProcess(_ m: MapReader, into s: inout ComposeService) throws {
        s.entrypoint = try m.nonNull("entrypoint").map { try command($0, what: "entrypoint") }
        s.command = try m.nonNull("command").map { try command($0, what: "command") }
        s.healthcheck = try m.nonNull("healthcheck").map(healthcheck)
        s.dependsOn = try m.nonNull("depends_on").map(dependsOn) ?? []
        s.deploy = try m.nonNull("deploy").map(deploy)
        try foldLegacyResources(m, into: &s)
        s.user = try m.string("user")
        s.workingDir = try m.string("working_dir")
        s.labels = try m.nonNull("labels").map { try keyValues($0, what: "labels") } ?? []
        s.restart = try m.string("restart")
        s.networkMode = try m.string("network_mode")
        s.networks = try m.nonNull("networks").map(networks) ?? []
        s.secrets = try m.nonNull("secrets").map { try resourceRefs($0, what: "secrets") } ?? []
        s.configs = try m.nonNull("configs").map { try resourceRefs($0, what: "configs") } ?? []
        s.extraHosts = try m.nonNull("extra_hosts").map(extraHosts) ?? []
    }

    /// cap_add, cap_drop, privileged, read_only, profiles, hostname, stop_grace_period.
    func decodeSecurity(_ m: MapReader, into s: inout ComposeService) throws {
        s.capAdd = try m.value("cap_add")?.stringList("'cap_add'") ?? []
        s.capDrop = try m.value("cap_drop")?.stringList("'cap_drop'") ?? []
        s.privileged = try m.bool("privileged")
        s.readOnly = try m.bool("read_only")
        s.profiles = try m.value("profiles")?.stringList("'profiles'") ?? []
        s.hostname = try m.string("hostname")
        s.stopGracePeriod = try m.string("stop_grace_period")
        // Before interpolation a `${VAR}` in it is read once the deployment's values are known.
        if let grace = s.stopGracePeriod, interpolated || !grace.contains("$"), DurationText.seconds(grace) == nil {
            throw m.error(
                at: "stop_grace_period", "stop_grace_period '\(grace)' of service '\(name)' is not a duration",
                hint: "write seconds or a duration such as 10s, 1m30s (compose's default is 10s)")
        }
    }

    /// sysctls, tmpfs, shm_size, stdin_open, tty, platform, runtime, dns, pull_policy, dns_search, dns_opt,
    /// security_opt, annotations, post_start, pre_stop, links, volumes_from.
    func decodeLongTail(_ m: MapReader, into s: inout ComposeService) throws {
        s.sysctls = try m.nonNull("sysctls").map { try keyValues($0, what: "sysctls") } ?? []
        s.tmpfs = try m.value("tmpfs")?.stringList("'tmpfs'", allowSingle: true) ?? []
        s.shmSize = try m.string("shm_size")
        s.stdinOpen = try m.bool("stdin_open")
        s.tty = try m.bool("tty")
        s.platform = try m.string("platform")
        s.runtime = try m.string("runtime")
        s.dns = try m.value("dns")?.stringList("'dns'", allowSingle: true) ?? []
        s.pullPolicy = try m.string("pull_policy")
        s.dnsSearch = try m.value("dns_search")?.stringList("'dns_search'", allowSingle: true) ?? []
        s.dnsOpt = try m.value("dns_opt")?.stringList("'dns_opt'") ?? []
        s.securityOpt = try m.value("security_opt")?.stringList("'security_opt'") ?? []
        s.annotations = try m.nonNull("annotations").map { try keyValues($0, what: "annotations") } ?? []
        s.postStart = try m.nonNull("post_start").map { try hooks($0, what: "post_start") } ?? []
        s.preStop = try m.nonNull("pre_stop").map { try hooks($0, what: "pre_stop") } ?? []
        s.links =
            try m.value("links")?.stringList("'links'").map { link in
                let parts = link.split(separator: ":", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 && !parts[1].isEmpty ? parts[1] : parts[0])
            } ?? []
        s.volumesFrom = try m.value("volumes_from")?.stringList("'volumes_from'") ?? []
    }

    /// A string is the context; a mapping has context/dockerfile/args/target and other build keys.
    func build(_ n: YNode) throws -> ComposeBuild {
        if n.isScalar { return ComposeBuild(context: try n.string("'build'")) }
        let m = try n.mapping("'build' of service '\(name)'")
        var b = ComposeBuild(context: try m.string("context") ?? ".")
        b.dockerfile = try m.string("dockerfile")
        b.target = try m.string("target")
        for (k, v) in try m.nonNull("args").map({ try keyValues($0, what: "build args") }) ?? [] { b.args[k] = v }
        m.accept([
            "additional_contexts", "cache_from", "cache_to", "dockerfile_inline", "entitlements", "extra_hosts",
            "isolation",
            "labels", "network", "no_cache", "platforms", "privileged", "provenance", "pull", "sbom", "secrets",
            "shm_size",
            "ssh", "tags", "ulimits",
        ])
        m.finish(into: diagnostics)
        return b
    }

    /// Map form (`KEY: value`, any scalar; no value → nil) or list form (`KEY=value`, `KEY=` → "", `KEY` → nil).
    func environment(_ n: YNode) throws -> [EnvEntry] {
        let what = "'environment' of service '\(name)'"
        if n.isSequence {
            return try n.sequence(what).map { item in
                let (key, value) = try splitAssignment(try item.string("an environment entry"), at: item)
                return EnvEntry(key: key, value: value, line: item.line)
            }
        }
        guard n.isMapping else {
            throw n.error(
                "\(what) must be a mapping or a list, not \(n.isScalar ? "'\(n.node.string ?? "")'" : "this")",
                hint: "write KEY: value pairs, or a list of KEY=value")
        }
        return try n.entries(what).map { e in
            guard e.value.isNull || e.value.isScalar else {
                throw e.value.error(
                    "environment value of '\(e.key)' must be a single value", hint: "quote it as a string")
            }
            return EnvEntry(key: e.key, value: try e.value.optionalString("environment value"), line: e.keyNode.line)
        }
    }

    /// `KEY=value` → (KEY, value); `KEY` → (KEY, nil).
    func splitAssignment(_ text: String, at node: YNode) throws -> (String, String?) {
        let eq = text.firstIndex(of: "=")
        let key = String(text[..<(eq ?? text.endIndex)])
        guard !key.isEmpty, !key.contains(where: \.isWhitespace) else {
            throw node.error(
                "invalid entry '\(text)': expected KEY=value", hint: "start the entry with a name, without spaces")
        }
        return (key, eq.map { String(text[text.index(after: $0)...]) })
    }

    /// A path, a list of paths, or a list of `{path, required, format}`.
    func envFiles(_ n: YNode) throws -> [ComposeEnvFile] {
        if n.isScalar { return [ComposeEnvFile(path: try n.string("'env_file'"))] }
        return try n.sequence("'env_file' of service '\(name)'").map { item in
            if item.isScalar { return ComposeEnvFile(path: try item.string("an env_file entry")) }
            let im = try item.mapping("an env_file entry")
            let f = ComposeEnvFile(
                path: try im.required("path").string("'path'"), required: try im.bool("required") ?? true)
            im.accept(["format"])
            im.finish(into: diagnostics)
            return f
        }
    }

    /// A list is taken as is; a string is split like a shell would, respecting quotes.
    func command(_ n: YNode, what: String) throws -> [String] {
        if n.isSequence {
            return try n.sequence("'\(what)' of service '\(name)'").map {
                try $0.isNull ? "" : $0.string("a word of '\(what)'")
            }
        }
        let text = try n.string("'\(what)'")
        do { return try ShellWords.split(text) } catch var e as SoError {
            e.location = n.location
            throw e
        }
    }

    /// A list of `{command, user, privileged, working_dir, environment}`.
    func hooks(_ n: YNode, what: String) throws -> [ComposeHook] {
        try n.sequence("'\(what)' of service '\(name)'").map { item in
            let hm = try item.mapping("a \(what) hook")
            let hook = ComposeHook(
                command: try command(try hm.required("command"), what: "\(what).command"),
                extras: ["user", "privileged", "working_dir", "environment"].filter { hm.nonNull($0) != nil })
            hm.accept(["user", "privileged", "working_dir", "environment"])
            hm.finish(into: diagnostics)
            return hook
        }
    }

    func healthcheck(_ n: YNode) throws -> ComposeHealthcheck {
        let m = try n.mapping("'healthcheck' of service '\(name)'")
        var h = ComposeHealthcheck()
        if let t = m.nonNull("test") {
            h.test =
                t.isScalar
                ? ["CMD-SHELL", try t.string("'test'")]
                : try t.sequence("'test'").map { try $0.string("a word of 'test'") }
        }
        h.interval = try m.string("interval")
        h.timeout = try m.string("timeout")
        h.retries = try m.int("retries")
        h.startPeriod = try m.string("start_period")
        h.startInterval = try m.string("start_interval")
        h.disable = try m.bool("disable") ?? false
        m.finish(into: diagnostics)
        return h
    }

    static let conditions = ["service_started", "service_healthy", "service_completed_successfully"]

    /// A list of names, or a mapping of name → {condition, restart, required}.
    func dependsOn(_ n: YNode) throws -> [ComposeDependency] {
        if n.isSequence { return try n.stringList("'depends_on'").map { ComposeDependency(service: $0) } }
        return try n.entries("'depends_on' of service '\(name)'").map { e in
            if e.value.isNull { return ComposeDependency(service: e.key) }
            let dm = try e.value.mapping("depends_on '\(e.key)'")
            let condition = try dm.string("condition") ?? "service_started"
            guard Self.conditions.contains(condition) else {
                throw dm.error(
                    at: "condition", "unknown depends_on condition '\(condition)'",
                    hint: "use service_started, service_healthy or service_completed_successfully")
            }
            let d = ComposeDependency(
                service: e.key, condition: condition, required: try dm.bool("required") ?? true,
                restart: try dm.bool("restart") ?? false)
            dm.finish(into: diagnostics)
            return d
        }
    }

    /// The pre-`deploy:` keys `cpus`, `mem_limit`, `mem_reservation` and `scale` mean what their
    /// `deploy:` counterparts mean (compose treats them as the same settings); `deploy:` wins.
    func foldLegacyResources(_ m: MapReader, into s: inout ComposeService) throws {
        let cpus = try QuantityCheck.cpu(m, "cpus", what: "cpus", of: "service '\(name)'")
        let memLimit = try QuantityCheck.memory(m, "mem_limit", what: "mem_limit", of: "service '\(name)'")
        let memReservation = try QuantityCheck.memory(
            m, "mem_reservation", what: "mem_reservation", of: "service '\(name)'")
        let scale = try m.int("scale")
        guard cpus != nil || memLimit != nil || memReservation != nil || scale != nil else { return }
        var d = s.deploy ?? ComposeDeploy()
        if d.replicas == nil { d.replicas = scale }
        if cpus != nil || memLimit != nil {
            var l = d.limits ?? ComposeResources()
            l.cpus = l.cpus ?? cpus
            l.memory = l.memory ?? memLimit
            d.limits = l
        }
        if memReservation != nil {
            var r = d.reservations ?? ComposeResources()
            r.memory = r.memory ?? memReservation
            d.reservations = r
        }
        s.deploy = d
    }

    func deploy(_ n: YNode) throws -> ComposeDeploy {
        let m = try n.mapping("'deploy' of service '\(name)'")
        var d = ComposeDeploy(replicas: try m.int("replicas"))
        if let r = m.nonNull("resources") {
            let rm = try r.mapping("'deploy.resources' of service '\(name)'")
            d.limits = try rm.nonNull("limits").map { try resources($0, what: "limits", others: ["pids"]) }
            d.reservations = try rm.nonNull("reservations").map {
                try resources($0, what: "reservations", others: ["devices", "generic_resources"])
            }
            rm.finish(into: diagnostics)
        }
        m.accept(["mode", "endpoint_mode", "labels", "placement", "restart_policy", "rollback_config", "update_config"])
        m.finish(into: diagnostics)
        return d
    }

    /// `cpus` (number or string, kept as written) and `memory`.
    func resources(_ n: YNode, what: String, others: [String]) throws -> ComposeResources {
        let m = try n.mapping("'deploy.resources.\(what)' of service '\(name)'")
        let r = ComposeResources(
            cpus: try QuantityCheck.cpu(m, "cpus", what: "deploy.resources.\(what).cpus", of: "service '\(name)'"),
            memory: try QuantityCheck.memory(
                m, "memory", what: "deploy.resources.\(what).memory", of: "service '\(name)'"))
        m.accept(others)
        m.finish(into: diagnostics)
        return r
    }

    /// A mapping (null values → "") or a list of `K=V` (a bare `K` → "").
    func keyValues(_ n: YNode, what: String) throws -> [(String, String)] {
        if n.isSequence {
            return try n.sequence("'\(what)' of service '\(name)'").map { item in
                let (k, v) = try splitAssignment(try item.string("a \(what) entry"), at: item)
                return (k, v ?? "")
            }
        }
        return try n.entries("'\(what)' of service '\(name)'").map { e in
            guard e.value.isNull || e.value.isScalar else {
                throw e.value.error("\(what) value of '\(e.key)' must be a single value", hint: "quote it as a string")
            }
            return (e.key, try e.value.optionalString("\(what) value") ?? "")
        }
    }

    /// A list of names, or a mapping of name → null or per-network options.
    func networks(_ n: YNode) throws -> [String] {
        if n.isSequence { return try n.stringList("'networks'") }
        return try n.entries("'networks' of service '\(name)'").map { e in
            if !e.value.isNull {
                let nm = try e.value.mapping("network '\(e.key)' of service '\(name)'")
                nm.accept([
                    "aliases", "interface_name", "ipv4_address", "ipv6_address", "link_local_ips", "mac_address",
                    "driver_opts", "priority", "gw_priority",
                ])
                nm.finish(into: diagnostics)
            }
            return e.key
        }
    }

    /// A list of `host:ip`, or a mapping of host → ip (or a list of ips); always `host:ip` entries.
    func extraHosts(_ n: YNode) throws -> [String] {
        if n.isSequence { return try n.stringList("'extra_hosts'") }
        return try n.entries("'extra_hosts' of service '\(name)'").flatMap { e in
            try e.value.stringList("extra_hosts '\(e.key)'", allowSingle: true).map { "\(e.key):\($0)" }
        }
    }

    /// Short (`name`) or long (`{source, target, uid, gid, mode}`) references to secrets/configs.
    func resourceRefs(_ n: YNode, what: String) throws -> [ComposeServiceResourceRef] {
        try n.sequence("'\(what)' of service '\(name)'").map { item in
            if item.isScalar { return ComposeServiceResourceRef(source: try item.string("a \(what) entry")) }
            let rm = try item.mapping("a \(what) entry")
            let r = ComposeServiceResourceRef(
                source: try rm.required("source").string("'source'"), target: try rm.string("target"),
                mode: try rm.string("mode"), uid: try rm.string("uid"), gid: try rm.string("gid"))
            rm.finish(into: diagnostics)
            return r
        }
    }
}
