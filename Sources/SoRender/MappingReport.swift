import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

public enum MappingReport {
    /// `plan`: the port plan the deployment was rendered with (`Manifest.ports`); `options.hostGateway`: the
    /// address `host-gateway` stands for when the caller found one.
    public static func build(_ model: DeploymentModel, plan: PortPlan, options: RenderOptions = RenderOptions())
        -> [MappingEntry]
    {
        let gateway = HostAliases.gateway(spec: model.spec.hostGateway, found: options.hostGateway)
        var out: [MappingEntry] = []
        let splits = Set(plan.services.filter(\.isSplit).map(\.name))
        for (file, svc) in model.skippedServices {
            out.append(
                MappingEntry(
                    file: file, service: svc.name, key: "profiles", line: svc.line, status: .ignored,
                    detail:
                        "not deployed: profile \(svc.profiles.joined(separator: ", ")) not selected ('so deploy init --profile NAME')"
                ))
        }
        for c in model.pods + model.jobs {
            let isJob = model.jobs.contains { $0.relativePath == c.relativePath }
            if c.compose.version1 {
                out.append(
                    MappingEntry(
                        file: c.relativePath, service: "", key: "(layout)", line: nil, status: .mapped,
                        detail:
                            "compose version 1 (services at the top level): read as under services:, with net as network_mode, "
                            + "dockerfile as build.dockerfile, log_driver and log_opt as logging"))
            }
            for svc in c.compose.services {
                func add(_ key: String, _ line: Int?, _ status: MappingEntry.Status, _ detail: String) {
                    out.append(
                        MappingEntry(
                            file: c.relativePath, service: svc.name, key: key, line: line, status: status,
                            detail: detail))
                }
                if splits.contains(svc.name) {
                    add(
                        "(pod)", svc.line, .approximated,
                        "its container port clashes with another service of the pod: runs in its own Deployment")
                }
                if !isJob, plan.service(svc.name)?.reach == .headless {
                    add(
                        "(name)", svc.line, .mapped,
                        "headless Service '\(NameRules.serviceName(svc.name))': the name resolves to the pod's IP "
                            + "(no ports: or expose: to put on a ClusterIP Service)")
                }
                if !isJob, svc.stopGracePeriod == nil {
                    add(
                        "(stop)", svc.line, .mapped,
                        "stopped as compose stops it: SIGTERM, then SIGKILL after \(Defaults.stopGraceSeconds) s "
                            + "(terminationGracePeriodSeconds: \(Defaults.stopGraceSeconds), not Kubernetes' 30 s)")
                }
                for (key, line) in svc.keys {
                    let (status, detail) = describe(
                        key, svc, model: model, plan: plan, isJob: isJob, hostGateway: gateway)
                    add(key, line, status, detail)
                }
            }
        }
        return out
    }

    typealias Described = (MappingEntry.Status, String)

    static func describe(
        _ key: String, _ svc: ComposeService, model: DeploymentModel, plan: PortPlan, isJob: Bool,
        hostGateway: String? = nil
    ) -> Described {
        if let described = fixed[key] { return described }
        switch key {
        case "image", "build", "pull_policy": return image(key, svc, model: model)
        case "environment", "env_file": return environment(key, svc, model: model)
        case "ports": return ports(svc, model: model, plan: plan, isJob: isJob)
        case "expose": return (.mapped, "containerPorts and ClusterIP Service '\(NameRules.serviceName(svc.name))'")
        case "links": return links(svc, model: model)
        case "volumes_from": return volumesFrom(svc, model: model)
        case "volumes": return volumes(svc, model: model)
        case "secrets", "configs": return files(key, svc, model: model)
        case "healthcheck", "depends_on", "restart": return running(key, svc, model: model, plan: plan, isJob: isJob)
        case "post_start", "pre_stop": return hooks(key, svc)
        case "deploy", "user", "labels", "profiles", "container_name", "hostname", "annotations":
            return pod(key, svc, model: model)
        case "network_mode", "networks": return network(key, svc, model: model)
        case "extra_hosts": return extraHosts(svc, model: model, gateway: hostGateway)
        case "stop_grace_period":
            let seconds = svc.stopGracePeriod.flatMap(Quantity.seconds) ?? Defaults.stopGraceSeconds
            return (
                .mapped,
                "terminationGracePeriodSeconds: \(seconds) (SIGTERM, then SIGKILL after it; a pod's is the longest of "
                    + "its services')"
            )
        case "security_opt": return securityOpt(svc)
        default:
            if let reason = unsupported[key] { return (.ignored, reason) }
            return (.ignored, "no Kubernetes mapping in so yet")
        }
    }

    /// Keys whose mapping is the same whatever the service says.
    static let fixed: [String: Described] = [
        "entrypoint": (.mapped, "command"),
        "command": (.mapped, "args"),
        "working_dir": (.mapped, "workingDir"),
        "cap_add": (.mapped, "securityContext.capabilities"),
        "cap_drop": (.mapped, "securityContext.capabilities"),
        "privileged": (.mapped, "securityContext.privileged (namespace admits privileged pods)"),
        "read_only": (.mapped, "securityContext.readOnlyRootFilesystem"),
        "stop_signal": (
            .ignored,
            "Kubernetes stops containers with the image's STOPSIGNAL or SIGTERM (its per-container stop signal, "
                + "the ContainerStopSignals feature, is alpha and off by default); set STOPSIGNAL in the image"
        ),
        "sysctls": (
            .mapped, "pod securityContext.sysctls (sysctls outside Kubernetes' safe set must be allowed on the kubelet)"
        ),
        "ulimits": (.ignored, "Kubernetes has no per-container ulimits; the container runtime's defaults apply"),
        "tmpfs": (.mapped, "emptyDir in memory at each path"),
        "shm_size": (.mapped, "emptyDir in memory at /dev/shm with that size limit"),
        "init": (
            .ignored, "no init process is injected; use an image with one (tini) if the process does not reap children"
        ),
        "stdin_open": (.mapped, "container stdin"),
        "tty": (.mapped, "container tty"),
        "platform": (
            .ignored,
            "the node's architecture decides (a node selector would leave the pod unschedulable where docker would emulate); the image must support it"
        ),
        "runtime": (.mapped, "runtimeClassName (a RuntimeClass of that name must exist)"),
        "cpus": (.mapped, "resources.limits.cpu (as deploy.resources.limits.cpus, which wins when both are given)"),
        "mem_limit": (
            .mapped, "resources.limits.memory (as deploy.resources.limits.memory, which wins when both are given)"
        ),
        "mem_reservation": (
            .mapped,
            "resources.requests.memory (as deploy.resources.reservations.memory, which wins when both are given)"
        ),
        "dns_search": (.approximated, "dnsConfig searches, added to the namespace's cluster search domains"),
        "dns_opt": (.mapped, "dnsConfig options"),
        "scale": (.mapped, "replicas (as deploy.replicas, which wins when both are given)"),
        "dns": (.approximated, "dnsConfig nameservers, added to the cluster DNS (at most 3)"),
    ]

    /// `image:`, `build:` and `pull_policy:`.
    static func image(_ key: String, _ svc: ComposeService, model: DeploymentModel) -> Described {
        switch key {
        case "image":
            if let o = model.spec.sections.imageOverrides.first(where: { $0.container == svc.name }) {
                return (
                    .mapped,
                    "container image, overridden by the spec: \(o.image)"
                )
            }
            return (
                .mapped,
                "container image \(svc.image ?? "")" + (svc.build != nil ? " (built by 'so build-containers')" : "")
            )
        case "build":
            let image = svc.image ?? LocalImage.name(stack: model.stackName, service: svc.name)
            return (
                .mapped,
                "built by 'so build-containers' as \(image) (docker, context \(svc.build?.context ?? ".")); start loads it into kind"
            )
        default:
            if let o = model.spec.sections.imagePullPolicy {
                return (.ignored, "the spec's image-pull-policy \(o) applies to every container")
            }
            guard let p = svc.pullPolicy.flatMap(PullPolicy.kubernetes) else {
                return (
                    .ignored,
                    "pull_policy \(svc.pullPolicy ?? "") has no Kubernetes equivalent; images are pulled when missing (IfNotPresent)"
                )
            }
            let exact = ["always", "never", "missing", "if_not_present"].contains(svc.pullPolicy ?? "")
            return (
                exact ? .mapped : .approximated,
                "imagePullPolicy \(p)"
                    + (exact
                        ? ""
                        : " (\(svc.pullPolicy ?? ""): "
                            + (p == "Always"
                                ? "pulled on every pod start, not on a schedule)"
                                : "the image is built by 'so build-containers')"))
            )
        }
    }

    /// `environment:` and `env_file:`.
    static func environment(_ key: String, _ svc: ComposeService, model: DeploymentModel) -> Described {
        if key == "environment" {
            let secrets = svc.environment.filter {
                ($0.value).map(SecretMarker.contains) ?? model.secretKeys.contains($0.key)
            }.map(\.key)
            return (
                .mapped,
                "env (\(svc.environment.count) entries"
                    + (secrets.isEmpty ? "" : "; from the generated Secret: \(secrets.joined(separator: ", "))")
                    + "), plus every config.env entry"
            )
        }
        if model.podPerService {
            return (
                .mapped,
                "env: the files' variables, under what environment: sets (\(svc.envFiles.map(\.path).joined(separator: ", ")))"
            )
        }
        return (
            .ignored,
            "variables from env files are not set in the container (as in laconic-so); the files are copied into the deployment; "
                + "put the variables under environment: or the spec's config:"
        )
    }

    /// `ports:`: each entry's container port and what its host port became.
    static func ports(_ svc: ComposeService, model: DeploymentModel, plan: PortPlan, isJob: Bool) -> Described {
        let published =
            isJob
            ? svc.ports.map { PortPlan.Published(port: $0, publication: .clusterOnly) }
            : plan.service(svc.name)?.published ?? []
        let notes = published.map { p -> String in
            switch p.publication {
            case .clusterOnly: return "\(p.port.containerPort)/\(p.port.proto)"
            case .nodePort(let n):
                return "\(p.port.containerPort)/\(p.port.proto) with NodePort \(n)"
                    + (model.deployTo == .k8sKind ? " (kind maps host port \(n))" : "")
            case .hostPort(let n):
                return
                    "\(p.port.containerPort)/\(p.port.proto) with hostPort \(n) on the node (kind maps host port \(n); namespace privileged)"
            case .unpublished(let n, let why):
                return "\(p.port.containerPort)/\(p.port.proto) (host port \(n) not published: \(why))"
            }
        }
        let approximated = published.contains {
            switch $0.publication {
            case .unpublished, .hostPort: return true
            default: return false
            }
        }
        let fromSpec = model.spec.ports.contains { $0.service == svc.name } ? " (the spec's network.ports)" : ""
        return (
            approximated ? .approximated : .mapped,
            "containerPorts and ClusterIP Service '\(NameRules.serviceName(svc.name))'\(fromSpec): "
                + notes.joined(separator: ", ")
        )
    }

    /// `volumes:`: what each of the service's own mounts became.
    static func volumes(_ svc: ComposeService, model: DeploymentModel) -> Described {
        let parts = svc.volumes.filter { $0.inheritedFrom == nil }.map { volumeMount($0, model: model) }
        // Binds served from the host (absolute paths allowed by the spec, directories deploy create made) keep
        // docker's read-write semantics; other binds are read-only ConfigMaps.
        func fromHost(_ m: ComposeVolumeMount) -> Bool {
            guard let s = m.source else { return false }
            if s.hasPrefix("/") || s.hasPrefix("~") {
                return HostPathName.allowed(s, spec: model.spec, podPerService: model.podPerService)
                    || model.repoBinds[s] != nil
            }
            return model.bindDirectories.values.contains(BindDirectory.volume(for: s))
        }
        let approx =
            svc.volumes.contains { $0.kind == .bind && !$0.readOnly && !fromHost($0) }
            || svc.volumes.contains { $0.kind == .npipe || $0.kind == .cluster }
        return (approx ? .approximated : .mapped, parts.joined(separator: "; "))
    }

    /// One mount: `TARGET: what it became`.
    static func volumeMount(_ m: ComposeVolumeMount, model: DeploymentModel) -> String {
        let id = model.id
        let source = m.source ?? ""
        switch m.kind {
        case .volume:
            guard let s = m.source else { return "\(m.target): emptyDir (anonymous volume)" }
            if model.spec.configmaps.contains(where: { $0.name == s }) {
                return "\(m.target): ConfigMap \(id)-\(NameRules.dnsLabel(s))"
            }
            let path = model.spec.volumes.first { $0.name == s }?.path
            return "\(m.target): PersistentVolumeClaim \(id)-\(NameRules.dnsLabel(s))"
                + (path.map { " on host path \($0)" } ?? "")
        case .bind
        where (m.source?.hasPrefix("/") == true || m.source?.hasPrefix("~") == true)
            && HostPathName.allowed(
                source, spec: model.spec,
                podPerService: model.podPerService):
            let v = HostPathName.volume(for: source)
            let path = model.spec.volumes.first { $0.name == v }?.path
            return "\(m.target): PersistentVolumeClaim \(id)-\(v)"
                + (path.map { " on host path \($0)" }
                    ?? " (no host path in the spec: an empty volume)")
        case .bind where model.repoBinds[m.source ?? ""] != nil:
            let s = m.source ?? ""
            return
                "\(m.target): PersistentVolumeClaim \(id)-\(HostPathName.volume(for: s)) on host path \(model.repoBinds[s]?.path ?? s) "
                + "(under the stack's repositories: no spec entry needed)"
        case .bind
        where model.bindDirectories.values.contains(BindDirectory.volume(for: m.source ?? ""))
            && !(m.source ?? "").hasPrefix("/"):
            let v = BindDirectory.volume(for: source)
            return
                "\(m.target): PersistentVolumeClaim \(id)-\(v) on host directory data/\(v) (made by deploy create: \(source) did not exist)"
        case .bind: return "\(m.target): read-only ConfigMap from \(m.source ?? "")"
        case .tmpfs: return "\(m.target): emptyDir in memory"
        default: return "\(m.target): not mapped (\(m.kind.rawValue))"
        }
    }

    /// `secrets:` and `configs:`: where each file is mounted, from which Secret or ConfigMap.
    static func files(_ key: String, _ svc: ComposeService, model: DeploymentModel) -> Described {
        let id = model.id
        if key == "secrets" {
            let parts = svc.secrets.map { r -> String in
                let top = model.pods.flatMap { $0.compose.secrets }.first { $0.name == r.source }
                let target =
                    r.target.map { $0.hasPrefix("/") ? $0 : "/run/secrets/\($0)" } ?? "/run/secrets/\(r.source)"
                let origin =
                    top?.file.map { "file \($0)" } ?? top?.environment.map { "environment \($0)" } ?? "inline content"
                let from =
                    top?.external == true
                    ? "the existing Secret \(r.source)"
                    : "Secret \(ComposeResourceNames.secret(id, r.source)), made at start from " + origin
                return "\(target): \(from)"
            }
            return (.mapped, parts.joined(separator: "; "))
        }
        let parts = svc.configs.map { r -> String in
            let top = model.pods.flatMap { $0.compose.configs }.first { $0.name == r.source }
            let target = r.target.map { $0.hasPrefix("/") ? $0 : "/\($0)" } ?? "/\(r.source)"
            return "\(target): ConfigMap "
                + (top?.external == true ? r.source : ComposeResourceNames.config(id, r.source))
        }
        return (.mapped, parts.joined(separator: "; "))
    }

    /// `healthcheck:`, `depends_on:` and `restart:`: how the service is run and waited for.
    static func running(_ key: String, _ svc: ComposeService, model: DeploymentModel, plan: PortPlan, isJob: Bool)
        -> Described
    {
        switch key {
        case "healthcheck":
            if svc.healthcheck?.disable == true || svc.healthcheck?.test?.first == "NONE" {
                return (.ignored, "healthcheck disabled")
            }
            return (
                .approximated,
                "readinessProbe (exec); a failing check takes the pod out of its Service instead of marking it unhealthy"
            )
        case "depends_on":
            guard model.podPerService else {
                return (
                    .ignored,
                    "containers of a pod start together; services must retry until what they depend on answers"
                )
            }
            let waits = DependencyWait.targets(svc, ports: plan)
            let skipped = svc.dependsOn.map(\.service).filter { d in !waits.contains { $0.0 == d } }
            let text =
                waits.map { "init container wait-for-\($0.0) waits until \($0.0):\($0.1) answers" }
                + (skipped.isEmpty
                    ? []
                    : ["\(skipped.joined(separator: ", ")): nothing to wait on (no port, or completion is not awaited)"])
            let healthy = svc.dependsOn.contains { $0.condition == "service_healthy" }
            return (
                skipped.isEmpty && !healthy ? .mapped : .approximated,
                text.joined(separator: "; ")
                    + (healthy ? " (service_healthy: an answering port stands for healthy)" : "")
            )
        default:
            if isJob { return (.approximated, "Jobs never restart (restartPolicy Never, backoffLimit 0)") }
            if model.podPerService && RenderState.isOneShot(svc) {
                return (
                    .mapped,
                    "restart: \(svc.restart ?? ""): a one-shot service runs once, as a Job (start waits for it to complete)"
                )
            }
            let policy = svc.restart ?? "no"
            return ["always", "unless-stopped"].contains(policy)
                ? (.mapped, "restartPolicy Always")
                : (.approximated, "restart: \(policy): Deployments always restart containers (restartPolicy Always)")
        }
    }

    /// `post_start:` and `pre_stop:` → the container's lifecycle hooks.
    static func hooks(_ key: String, _ svc: ComposeService) -> Described {
        let hooks = key == "post_start" ? svc.postStart : svc.preStop
        let k8s = key == "post_start" ? "postStart" : "preStop"
        if svc.isInitContainer { return (.ignored, "init containers have no lifecycle hooks") }
        var notes: [String] = []
        if hooks.count > 1 {
            notes.append("only the first of \(hooks.count) hooks runs (Kubernetes has one per container)")
        }
        let extras = Set(hooks.flatMap(\.extras)).sorted()
        if !extras.isEmpty {
            notes.append(
                "\(extras.joined(separator: ", ")) not carried over: the hook runs as the container's user with its environment"
            )
        }
        return (
            notes.isEmpty ? .mapped : .approximated,
            "lifecycle.\(k8s) exec" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
        )
    }

    /// Keys about the pod the service runs in: replicas and resources, user, labels, profiles, names, annotations.
    static func pod(_ key: String, _ svc: ComposeService, model: DeploymentModel) -> Described {
        switch key {
        case "deploy":
            var d: [String] = []
            if let r = svc.deploy?.replicas {
                d.append(
                    model.spec.replicas.map { "replicas \(r) (the spec's replicas \($0) wins)" }
                        ?? (model.podPerService ? "replicas \(r)" : "replicas \(r) for the whole pod"))
            }
            if svc.deploy?.limits != nil || svc.deploy?.reservations != nil { d.append("resources limits/requests") }
            return (.mapped, d.isEmpty ? "nothing to map" : d.joined(separator: ", "))
        case "user":
            let numeric = svc.user.map { Int($0.split(separator: ":")[0]) != nil || $0 == "root" } ?? false
            return numeric
                ? (.mapped, "runAsUser/runAsGroup") : (.ignored, "a user name cannot be mapped; write UID[:GID]")
        case "labels":
            return svc.isInitContainer
                ? (.mapped, "laconic.init-container: runs as an init container")
                : (
                    .ignored,
                    "compose labels are not copied to pods (use the spec's labels:)"
                )
        case "profiles":
            return (
                .mapped,
                "deployed: profile \(svc.profiles.filter { model.spec.profiles.contains($0) }.joined(separator: ", ")) is selected"
            )
        case "container_name":
            return (
                .ignored,
                "pods get generated names; other services reach this one by its Service name '\(NameRules.serviceName(svc.name))'"
            )
        case "hostname":
            return model.podPerService
                ? (.mapped, "pod hostname") : (.ignored, "the pod holds several services; they share one hostname")
        default:
            let bad = svc.annotations.map(\.0).filter { !NameRules.isLabelKey($0) }
            let owner = model.podPerService ? "its pod's" : "the pod's (shared by its services)"
            if bad.isEmpty { return (.mapped, "\(owner) annotations (the spec's annotations win)") }
            return (
                .approximated,
                "\(owner) annotations; left out, not valid Kubernetes keys: \(bad.joined(separator: ", "))"
            )
        }
    }

    /// `network_mode:` and `networks:`.
    static func network(_ key: String, _ svc: ComposeService, model: DeploymentModel) -> Described {
        if key == "network_mode" {
            if svc.networkMode == "host" { return (.mapped, "hostNetwork for the whole pod (privileged namespace)") }
            if ["bridge", "default"].contains(svc.networkMode ?? "") {
                return (.mapped, "the pod network (what compose's default bridge is in a cluster)")
            }
            return (.ignored, "network_mode \(svc.networkMode ?? "") has no Kubernetes equivalent")
        }
        if model.podPerService, let all = ComposeNetworks.peers(model.pods.flatMap(\.compose.services)),
            let mine = all.first(where: { $0.service.name == svc.name })
        {
            return (
                .mapped,
                "NetworkPolicy \(model.id)-net-\(NameRules.dnsLabel(svc.name)): reachable from "
                    + (mine.peers.isEmpty ? "no other service" : mine.peers.joined(separator: ", "))
                    + " (sharing \(ComposeNetworks.networks(of: svc).joined(separator: ", ")))"
            )
        }
        return (
            .ignored,
            model.podPerService
                ? "every service is on the default network"
                : "containers of a pod share its network; services of a deployment share its namespace's network"
        )
    }

    /// `security_opt:`: no-new-privileges is so's default; the rest is not carried over.
    static func securityOpt(_ svc: ComposeService) -> Described {
        let noNewPrivileges = svc.securityOpt.filter {
            ["no-new-privileges", "no-new-privileges:true", "no-new-privileges=true"].contains($0)
        }
        let rest = svc.securityOpt.filter { !noNewPrivileges.contains($0) }
        if rest.isEmpty && !noNewPrivileges.isEmpty && svc.privileged != true {
            return (
                .mapped,
                "no-new-privileges: allowPrivilegeEscalation false (so's default)"
            )
        }
        return (
            .ignored,
            (noNewPrivileges.isEmpty ? "" : "no-new-privileges: allowPrivilegeEscalation false (so's default); ")
                + "\(rest.joined(separator: ", ")) not mapped: pods run with seccomp RuntimeDefault, AppArmor and SELinux labels are not carried over"
        )
    }

    /// extra_hosts → hostAliases: each entry's address, where host-gateway's came from, what was left out.
    static func extraHosts(_ svc: ComposeService, model: DeploymentModel, gateway: String?) -> (
        MappingEntry.Status, String
    ) {
        let r = HostAliases.resolve(svc.extraHosts, gateway: gateway)
        var parts = r.aliases.flatMap { a in
            a.hostnames.map { h in
                "\(h) → \(a.ip)"
                    + (r.viaGateway.contains(h) && a.ip == gateway
                        ? " (host-gateway: "
                            + (model.spec.hostGateway != nil
                                ? "the spec's host-gateway)" : "kind's docker network gateway)") : "")
            }
        }
        parts += r.leftOut.map {
            "\($0.entry) left out: \($0.reason)"
                + ($0.reason.hasPrefix("no address")
                    ? " (set host-gateway: IP in the spec; start on kind finds it from kind's docker network)" : "")
        }
        let status: MappingEntry.Status =
            r.aliases.isEmpty ? .ignored : (r.leftOut.isEmpty && r.viaGateway.isEmpty ? .mapped : .approximated)
        return (status, (r.aliases.isEmpty ? "no hostAliases: " : "hostAliases: ") + parts.joined(separator: "; "))
    }

    /// Compose keys `so` accepts but does not map (beyond those `describe` names itself), each with the
    /// reason and what to do instead.
    static let unsupported: [String: String] = [
        "attach": "so logs shows every container's output; there is nothing to attach to",
        "blkio_config": "Kubernetes has no block-I/O weights or limits per container",
        "cgroup": "pods get their own cgroup namespace from the container runtime",
        "cgroup_parent": "the kubelet places pods in its own cgroup hierarchy",
        "cpu_count": "Windows-only CPU setting; set deploy.resources.limits.cpus or the spec's resources:",
        "cpu_percent": "Windows-only CPU setting; set deploy.resources.limits.cpus or the spec's resources:",
        "cpu_period": "CFS tuning is the kubelet's; set deploy.resources.limits.cpus or the spec's resources:",
        "cpu_quota": "CFS tuning is the kubelet's; set deploy.resources.limits.cpus or the spec's resources:",
        "cpu_rt_period": "Kubernetes has no real-time CPU scheduling per container",
        "cpu_rt_runtime": "Kubernetes has no real-time CPU scheduling per container",
        "cpu_shares":
            "relative CPU weight comes from the CPU request; set deploy.resources.reservations.cpus or the spec's resources:",
        "cpuset": "CPU pinning is the kubelet's CPU manager's job, not a pod field",
        "credential_spec": "Windows gMSA credential specs are not supported",
        "develop":
            "compose watch (develop:) is a docker compose development loop; rebuild with 'so build-containers' and restart",
        "device_cgroup_rules": "Kubernetes has no device cgroup rules; devices come from device plugins",
        "devices": "host devices reach pods only through device plugins (or a privileged container); not mapped",
        "domainname": "pods have no NIS domain name setting",
        "extends": "resolved when the compose files were merged",
        "external_links": "pods reach other deployments' Services by DNS name (service.namespace)",
        "gpus":
            "GPUs are requested through device-plugin resources (nvidia.com/gpu) in the spec, not mapped from compose",
        "group_add": "not mapped: supplementary groups would need numeric GIDs in the pod securityContext",
        "ipc": "pods share IPC between their containers; host or cross-pod IPC is not mapped",
        "isolation": "Windows container isolation is not supported",
        "label_file": "compose labels are not copied to pods (use the spec's labels:)",
        "logging": "container logs go to the node's runtime log; read them with 'so deployment logs'",
        "mac_address": "pods get their network interface from the cluster's CNI; a MAC cannot be set",
        "mem_swappiness": "swap is the kubelet's setting, not a pod field",
        "memswap_limit": "swap is the kubelet's setting, not a pod field",
        "models": "compose AI models are not supported",
        "oom_kill_disable": "the kubelet decides OOM handling from the pod's QoS class",
        "oom_score_adj": "the kubelet sets OOM scores from the pod's QoS class",
        "pid": "process namespaces are per pod; host or cross-container PID sharing is not mapped",
        "pids_limit": "the PID limit is the kubelet's podPidsLimit, not a pod field",
        "provider": "compose provider services run outside containers and are not supported",
        "pull_refresh_after": "not mapped: image pulls follow Kubernetes' pull policy",
        "storage_opt": "container storage quotas belong to the runtime; size volumes in the spec's resources:",
        "use_api_socket": "the docker API socket does not exist in a Kubernetes pod",
        "userns_mode": "user namespaces are not mapped (pod hostUsers is left to the cluster)",
        "uts": "a pod's UTS namespace is its own; host UTS is not mapped",
        "volume_driver":
            "volumes are PersistentVolumeClaims of the cluster's default StorageClass; sizes go in the spec's resources:",
    ]

    /// `links:`: an alias is a Service of its own; a plain link needs nothing.
    static func links(_ svc: ComposeService, model: DeploymentModel) -> (MappingEntry.Status, String) {
        let all = model.pods.flatMap(\.compose.services).map(\.name)
        var parts: [String] = []
        var ignored = false
        for link in svc.links {
            if !all.contains(link.service) {
                parts.append("\(link.service): no such service in this deployment")
                ignored = true
            } else if NameRules.serviceName(link.alias) == NameRules.serviceName(link.service) {
                parts.append("\(link.service): reachable by its Service name")
            } else if all.contains(where: { NameRules.serviceName($0) == NameRules.serviceName(link.alias) }) {
                parts.append("\(link.service) as \(link.alias): not mapped, '\(link.alias)' is a service's own name")
                ignored = true
            } else {
                parts.append(
                    "\(link.service) as \(link.alias): Service '\(NameRules.serviceName(link.alias))' like '\(NameRules.serviceName(link.service))'"
                )
            }
        }
        return (ignored ? .approximated : .mapped, parts.joined(separator: "; "))
    }

    /// `volumes_from:`: the named services' volumes and binds, mounted at the same paths.
    static func volumesFrom(_ svc: ComposeService, model: DeploymentModel) -> (MappingEntry.Status, String) {
        var parts: [String] = []
        var approximated = false
        for entry in svc.volumesFrom {
            let name = String(entry.split(separator: ":").first ?? "")
            let source = model.pods.lazy.compactMap { $0.compose.services.first { $0.name == name } }.first
            guard name != "container", let source else {
                let why =
                    name == "container"
                    ? "a container is not a service of the deployment" : "no service '\(name)' in this compose file"
                parts.append("\(entry): not mapped (\(why))")
                approximated = true
                continue
            }
            let inherited = svc.volumes.filter { $0.inheritedFrom == name }.map {
                $0.target + ($0.readOnly ? " (read-only)" : "")
            }
            let unshared = source.volumes.filter { $0.kind != .bind && ($0.kind != .volume || $0.source == nil) }.map(
                \.target)
            var text = "\(name)'s " + (inherited.isEmpty ? "volumes: none to share" : inherited.joined(separator: ", "))
            if !unshared.isEmpty {
                text += "; not \(unshared.joined(separator: ", ")) (an anonymous volume or tmpfs is one container's)"
                approximated = true
            }
            if model.podPerService, !inherited.isEmpty {
                text += " (two pods share the claims: ReadWriteOnce keeps them on one node)"
                approximated = true
            }
            parts.append(text)
        }
        return (approximated ? .approximated : .mapped, parts.joined(separator: "; "))
    }

    /// A readable table grouped by file and service.
    public static func text(_ entries: [MappingEntry]) -> String {
        var out = ""
        var file = ""
        var service = ""
        let width = max(12, entries.map(\.key.count).max() ?? 0)
        for e in entries {
            if e.file != file {
                out += "\(e.file)\n"
                file = e.file
                service = ""
            }
            if e.service != service, !e.service.isEmpty {
                out += "  service \(e.service)\n"
                service = e.service
            }
            out +=
                "    " + e.key.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                + e.status.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0) + e.detail + "\n"
        }
        return out
    }
}
