import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoCompose
@testable import SoRender

/// Small inline cases, one mapping rule each: a deployment directory written by hand, rendered.
func renderSnippet(
    compose: String, spec extra: String = "", deployTo: String = "k8s-kind", config: String = "",
    options: RenderOptions = RenderOptions()
) throws
    -> Manifest
{
    let t = try TempDir("so-snippet")
    defer { t.cleanup() }
    try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
    try t.write("stack.yml", "name: s\npods: [p]\n")
    try t.write(
        "spec.yml",
        "stack: /x/stacks/s\ndeploy-to: \(deployTo)\n" + (deployTo == "k8s" ? "kube-config: /x/kc\n" : "") + extra)
    try t.write("config.env", config)
    try t.write("compose/docker-compose-p.yml", compose)
    try t.write("config/p/a.conf", "x\n")
    let model = try DeploymentLoader.load(
        t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
    return try Renderer.render(model, options: options)
}

extension Manifest {
    func object(_ kind: String, _ name: String? = nil) -> YValue? {
        objects.first { $0.kind == kind && (name == nil || $0.name == name) }?.value
    }
    func has(_ kind: String, _ name: String) -> Bool { objects.contains { $0.kind == kind && $0.name == name } }
}

extension YValue {
    subscript(_ key: String) -> YValue? {
        if case .map(let p) = self { return p.first { $0.0 == key }?.1 }
        return nil
    }
    subscript(_ i: Int) -> YValue? {
        if case .list(let l) = self, i < l.count { return l[i] }
        return nil
    }
    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    var int: Int? {
        if case .int(let i) = self { return i }
        return nil
    }
}

@Suite struct MappingRuleTests {
    @Test func pvcMeansRecreateOtherwiseRollingUpdate() throws {
        let withVolume = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    volumes: [data:/d]\nvolumes:\n  data:\n",
            spec: "volumes:\n  data:\n")
        #expect(withVolume.object("Deployment")?["spec"]?["strategy"]?["type"]?.string == "Recreate")
        let without = try renderSnippet(compose: "services:\n  a:\n    image: x\n")
        #expect(without.object("Deployment")?["spec"]?["strategy"]?["type"]?.string == "RollingUpdate")
    }

    @Test func nodePortOnlyForHostPortsInRange() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    ports: [\"80\", \"30080:8080\", \"8443:443\"]\n")
        #expect(m.has("Service", "laconic-d-nodeport-8080-tcp"))
        #expect(!m.objects.contains { $0.name.contains("nodeport-80-") || $0.name.contains("nodeport-443") })
        #expect(m.warnings.contains { $0.message.contains("host port 8443") })
        #expect(m.has("Service", "a"))
    }

    @Test func initContainersByLabel() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  setup:\n    image: x\n    labels: {laconic.init-container: \"true\"}\n  a:\n    image: y\n"
        )
        let pod = m.object("Deployment")?["spec"]?["template"]?["spec"]
        #expect(pod?["initContainers"]?[0]?["name"]?.string == "setup")
        #expect(pod?["containers"]?[0]?["name"]?.string == "a")
    }

    @Test func exactSecretReferenceBecomesSecretKeyRef() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    environment:\n      PASSWORD: ${DB_PASSWORD}\n",
            spec: "config:\n  DB_PASSWORD: $generate:hex:16$\n")
        let env = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["env"]?[0]
        #expect(env?["name"]?.string == "PASSWORD")
        #expect(env?["valueFrom"]?["secretKeyRef"]?["key"]?.string == "DB_PASSWORD")
        #expect(env?["value"] == nil)
    }

    @Test func ingressHasTLSOnlyOffKind() throws {
        let compose = "services:\n  web:\n    image: x\n    ports: [\"80\"]\n"
        let route =
            "network:\n  http-proxy:\n    - host-name: a.example\n      routes:\n        - {path: /, proxy-to: web:80}\n"
        let kind = try renderSnippet(compose: compose, spec: route)
        #expect(kind.object("Ingress")?["spec"]?["tls"] == nil)
        #expect(kind.object("Ingress")?["spec"]?["ingressClassName"]?.string == "caddy")
        let k8s = try renderSnippet(compose: compose, spec: route + "ingress-class: nginx\n", deployTo: "k8s")
        #expect(k8s.object("Ingress")?["spec"]?["tls"]?[0]?["secretName"]?.string == "laconic-d-a.example-tls")
        #expect(k8s.object("Ingress")?["spec"]?["ingressClassName"]?.string == "nginx")
    }

    /// TLS as the user's cluster has it: laconic-so's issuer on k8s unless the spec says otherwise; an issuer by
    /// name and kind, an existing Secret, or none, per spec and per host. Hosts whose issuer differs from the
    /// spec's go in an Ingress of their own (the annotation is the whole Ingress's): cert-manager never manages a
    /// Secret the user made.
    @Test func tlsAsTheSpecSaysPerSpecAndPerHost() throws {
        let compose = "services:\n  web:\n    image: x\n    ports: [\"80\"]\n"
        func route(_ host: String, tls: String = "") -> String {
            "    - host-name: \(host)\n      routes:\n        - {path: /, proxy-to: web:80}\n" + tls
        }
        let none = try renderSnippet(
            compose: compose, spec: "network:\n  tls: none\n  http-proxy:\n" + route("a.example"), deployTo: "k8s")
        #expect(none.object("Ingress")?["spec"]?["tls"] == nil)
        #expect(none.objects.first { $0.kind == "Ingress" }?.annotations.isEmpty == true)

        let staging = try renderSnippet(
            compose: compose,
            spec: "network:\n  tls: {issuer: staging, issuer-kind: Issuer}\n  http-proxy:\n" + route("a.example")
                + route("b.example", tls: "      tls: {secret: b-cert}\n")
                + route("c.example", tls: "      tls: {issuer: other}\n"))
        let ingresses = staging.objects.filter { $0.kind == "Ingress" }
        #expect(
            ingresses.map(\.name) == [
                "laconic-d-ingress", "laconic-d-ingress-no-issuer", "laconic-d-ingress-cluster-issuer-other",
            ])
        #expect(
            ingresses.map { $0.annotations.map { "\($0.0)=\($0.1)" } } == [
                ["cert-manager.io/issuer=staging"], [], ["cert-manager.io/cluster-issuer=other"],
            ])
        #expect(
            staging.object("Ingress", "laconic-d-ingress")?["spec"]?["tls"]?[0]?["secretName"]?.string
                == "laconic-d-a.example-tls")
        #expect(
            staging.object("Ingress", "laconic-d-ingress-no-issuer")?["spec"]?["tls"]?[0]?["secretName"]?.string
                == "b-cert")
        #expect(
            staging.object("Ingress", "laconic-d-ingress-no-issuer")?["spec"]?["rules"]?[0]?["host"]?.string
                == "b.example")

        // Per host under network.tls.hosts, over laconic-so's default on k8s.
        let hosts = try renderSnippet(
            compose: compose,
            spec: "network:\n  http-proxy:\n" + route("a.example") + route("b.example")
                + "  tls:\n    hosts:\n      b.example: none\n", deployTo: "k8s")
        #expect(
            hosts.object("Ingress", "laconic-d-ingress")?["metadata"]?["annotations"]?[
                "cert-manager.io/cluster-issuer"]?.string == "letsencrypt-prod")
        #expect(hosts.object("Ingress", "laconic-d-ingress-no-issuer")?["spec"]?["tls"] == nil)
    }

    /// With no ingress-class in the spec, an Ingress names the class start found marked default on the cluster,
    /// else caddy (laconic-so's); the spec's own class wins over both.
    @Test func theIngressClassIsTheClustersDefaultUnlessTheSpecNamesOne() throws {
        let compose = "services:\n  web:\n    image: x\n    ports: [\"80\"]\n"
        let route =
            "network:\n  http-proxy:\n    - host-name: a.example\n      routes:\n        - {path: /, proxy-to: web:80}\n"
        let traefik = RenderOptions(ingressClass: "traefik")
        #expect(
            try renderSnippet(compose: compose, spec: route, options: traefik).object("Ingress")?["spec"]?[
                "ingressClassName"]?.string == "traefik")
        #expect(
            try renderSnippet(compose: compose, spec: route + "ingress-class: nginx\n", options: traefik).object(
                "Ingress")?["spec"]?["ingressClassName"]?.string == "nginx")
    }

    /// Stopped as compose stops it: 10 s between SIGTERM and SIGKILL unless stop_grace_period says otherwise; a
    /// pod's is the longest of its services'.
    @Test func stopGraceIsComposes() throws {
        let plain = try renderSnippet(compose: "services:\n  a:\n    image: x\n")
        #expect(plain.object("Deployment")?["spec"]?["template"]?["spec"]?["terminationGracePeriodSeconds"] == .int(10))
        let set = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    stop_grace_period: 1m30s\n  b:\n    image: y\n")
        #expect(set.object("Deployment")?["spec"]?["template"]?["spec"]?["terminationGracePeriodSeconds"] == .int(90))
        let short = try renderSnippet(compose: "services:\n  a:\n    image: x\n    stop_grace_period: 2s\n")
        #expect(short.object("Deployment")?["spec"]?["template"]?["spec"]?["terminationGracePeriodSeconds"] == .int(2))
    }

    @Test func storageSizesKeepTheirUnits() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    volumes: [data:/d]\nvolumes:\n  data:\n",
            spec: "volumes:\n  data:\nresources:\n  volumes:\n    data:\n      reservations: {storage: 10Gi}\n")
        #expect(m.object("PersistentVolumeClaim")?["spec"]?["resources"]?["requests"]?["storage"]?.string == "10Gi")
    }

    @Test func hostPathVolumesLiveUnderMntOnKind() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    volumes: [data:/d]\nvolumes:\n  data:\n",
            spec: "kind-mount-root: /srv/kind\nvolumes:\n  data: /srv/kind/app/data\n")
        #expect(m.object("PersistentVolume")?["spec"]?["hostPath"]?["path"]?.string == "/mnt/app/data")
        #expect(m.object("PersistentVolumeClaim")?["spec"]?["volumeName"]?.string == "laconic-d-data")
    }

    @Test func namespaceOverrideAndPodSecurity() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    network_mode: host\n", spec: "namespace: team-a\n")
        let ns = try #require(m.objects.first)
        #expect(ns.kind == "Namespace" && ns.name == "team-a")
        #expect(ns.labels.contains { $0 == ("pod-security.kubernetes.io/enforce", "privileged") })
        #expect(m.object("Deployment")?["spec"]?["template"]?["spec"]?["hostNetwork"] == .bool(true))
        let restricted = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n", spec: "security:\n  pod-security: restricted\n")
        #expect(restricted.objects[0].labels.contains { $0 == ("pod-security.kubernetes.io/enforce", "restricted") })
    }

    @Test func configEnvIsInjectedAndWins() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    environment:\n      - MODE=compose\n      - PORT=1\n",
            config: "MODE=config\nEXTRA='a b'\n")
        let env = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["env"]
        #expect(env?[0]?["value"]?.string == "config")
        #expect(env?[1]?["value"]?.string == "1")
        #expect(env?[2]?["name"]?.string == "EXTRA" && env?[2]?["value"]?.string == "a b")
    }

    @Test func bindMountsBecomeConfigMapsWithSubPath() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    volumes: [\"../config/p/a.conf:/etc/a.conf:ro\"]\n")
        #expect(m.has("ConfigMap", "laconic-d-host-path-config-p-a-conf"))
        let mount = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["volumeMounts"]?[0]
        #expect(mount?["subPath"]?.string == "a.conf" && mount?["mountPath"]?.string == "/etc/a.conf")
    }

    @Test func restrictedPodSecurityMakesCompliantPodsAndRefusesWhatItForbids() throws {
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n    cap_add: [NET_BIND_SERVICE]\n",
            spec: "security:\n  pod-security: restricted\n")
        let pod = m.object("Deployment")?["spec"]?["template"]?["spec"]
        #expect(pod?["securityContext"]?["runAsNonRoot"] == .bool(true))
        #expect(pod?["securityContext"]?["runAsUser"]?.int == 1000)
        #expect(pod?["securityContext"]?["seccompProfile"]?["type"]?.string == "RuntimeDefault")
        let c = pod?["containers"]?[0]?["securityContext"]
        #expect(c?["allowPrivilegeEscalation"] == .bool(false))
        #expect(c?["capabilities"]?["drop"]?[0]?.string == "ALL")
        #expect(c?["capabilities"]?["add"]?[0]?.string == "NET_BIND_SERVICE")
        #expect(
            m.object("Namespace")?["metadata"]?["labels"]?["pod-security.kubernetes.io/enforce"]?.string == "restricted"
        )
        for bad in ["    privileged: true\n", "    cap_add: [SYS_ADMIN]\n", "    user: root\n"] {
            #expect(throws: SoError.self) {
                try renderSnippet(
                    compose: "services:\n  a:\n    image: x\n" + bad, spec: "security:\n  pod-security: restricted\n")
            }
        }
    }

    @Test func egressAllowlistResolvesConfigAndURLs() throws {
        var e = EgressPolicy()
        e.entries = [
            "${GIT_REPO}", "git@gitlab.example.org:acme/web.git", "https://user@api.example.com:8443/v1", "10.0.0.0/8",
            "192.0.2.1", "${UNSET}", "github.com",
        ]
        let t = e.targets(config: ["GIT_REPO": "https://github.com/acme/web"])
        #expect(t.hosts == ["github.com", "gitlab.example.org", "api.example.com"])
        #expect(t.cidrs == ["10.0.0.0/8", "192.0.2.1/32"])
        #expect(throws: SoError.self) {
            try renderSnippet(compose: "services:\n  a:\n    image: x\n", spec: "egress: [not a host]\n")
        }
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n",
            spec: "egress: [10.1.0.0/16]\nquota:\n  cpu: '2'\n  memory: 4G\n  pods: 5\n")
        #expect(
            m.objects.filter { $0.kind == "NetworkPolicy" }.map(\.name) == [
                "laconic-d-default-deny", "laconic-d-same-namespace", "laconic-d-dns", "laconic-d-egress-allowlist",
            ])
        #expect(m.object("ResourceQuota")?["spec"]?["hard"]?["limits.memory"]?.string == "4Gi")
        #expect(m.object("LimitRange") != nil)
        // Policies come right after the Namespace: in place before any pod exists.
        #expect(
            Array(m.objects.prefix(7).map(\.kind)) == [
                "Namespace", "NetworkPolicy", "NetworkPolicy", "NetworkPolicy", "NetworkPolicy", "ResourceQuota",
                "LimitRange",
            ])
    }

    /// A URL's own port is allowed for its host only: git:// is 9418, https://host:8443 is 8443; ports
    /// egress-ports already allow add nothing.
    @Test func egressAllowsTheURLsOwnPortForItsHost() throws {
        var e = EgressPolicy()
        e.entries = [
            "${GIT_REPO}", "https://user@api.example.com:8443/v1", "https://github.com/acme/web",
            "ssh://git@[2001:db8::1]:2222/x", "http://192.0.2.7:8080/",
        ]
        #expect(
            e.urlPorts(config: ["GIT_REPO": "git://git.example.org/acme/web.git"])
                == [
                    "git.example.org": [9418], "api.example.com": [8443], "2001:db8::1/128": [2222],
                    "192.0.2.7/32": [8080],
                ])
        let m = try renderSnippet(
            compose: "services:\n  a:\n    image: x\n",
            spec: "egress: ['git://10.250.0.1/acme/app.git', 'https://10.250.0.2:8443/']\n")
        let policy = try #require(m.objects.first { $0.name == "laconic-d-egress-allowlist" })
        let egress = try JSON.parse(Data(policy.json().utf8)).at("spec", "egress")?.array ?? []
        func rule(_ r: JSON) -> String {
            let to = (r["to"]?.array ?? []).compactMap { $0.at("ipBlock", "cidr")?.string }
            let ports = (r["ports"]?.array ?? []).compactMap { $0["port"]?.int }.map(String.init)
            return to.joined(separator: ",") + " " + ports.joined(separator: ",")
        }
        #expect(
            egress.map(rule) == ["10.250.0.1/32,10.250.0.2/32 443,22,80", "10.250.0.1/32 9418", "10.250.0.2/32 8443"])
    }

    @Test func buildOnlyServicesUseTheLocalImageName() throws {
        let m = try renderSnippet(
            compose: "services:\n  api:\n    build: ./src\n  web:\n    image: acme/web:1\n    build: .\n")
        let containers = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]
        #expect(containers?[0]?["image"]?.string == "s-api:local")
        #expect(containers?[1]?["image"]?.string == "acme/web:1")
    }

    /// Every compose service key `so` accepts says in the report what it became, or why it cannot map:
    /// no key falls through to a generic "not mapped yet".
    @Test func everyAcceptedKeyHasAMappingOrAReason() throws {
        // Keys decoded into the model need typed values; the rest are accepted as written.
        let typed: [String: String] = [
            "dns": "[1.1.1.1]", "hostname": "h", "platform": "linux/amd64", "runtime": "runc", "shm_size": "64m",
            "stdin_open": "true", "stop_grace_period": "10s", "sysctls": "{net.core.somaxconn: \"1024\"}",
            "tmpfs": "[/tmp]", "tty": "true", "cpus": "0.5", "mem_limit": "256m", "mem_reservation": "128m",
            "scale": "2",
            "security_opt": "[no-new-privileges:true, \"seccomp:unconfined\"]",
            "post_start": "[{command: [touch, /ready]}]", "annotations": "{a: b}", "links": "[a]",
            "volumes_from": "[a]", "dns_search": "example.com", "dns_opt": "[ndots:2]",
            "pre_stop": "[{command: \"nginx -s quit\", user: root}, {command: x}]",
        ]
        let keys = ServiceDecoder.otherKnown
        let compose = "services:\n  a:\n    image: x\n" + keys.map { "    \($0): \(typed[$0] ?? "x")\n" }.joined()
        let t = try TempDir("so-report-keys")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\npod-per-service: true\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n")
        try t.write("config.env", "")
        try t.write("compose/docker-compose-p.yml", compose)
        let model = try DeploymentLoader.load(
            t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
        let report = MappingReport.build(model, plan: PortPlan(model))
        // No ports: the service answers to its name through a headless Service, which the report says.
        #expect(Set(report.map(\.key)) == Set(keys + ["image", "(name)"]))
        for e in report {
            #expect(!e.detail.contains("so yet") && !e.detail.isEmpty, "\(e.key): \(e.detail)")
        }
        #expect(report.first { $0.key == "post_start" }?.status == .mapped)
        #expect(
            report.first { $0.key == "pre_stop" }?.detail
                == "lifecycle.preStop exec (only the first of 2 hooks runs (Kubernetes has one per container); user not carried over: the hook runs as the container's user with its environment)"
        )
        #expect(report.first { $0.key == "security_opt" }?.status == .ignored)
        #expect(
            report.first { $0.key == "security_opt" }?.detail.hasPrefix(
                "no-new-privileges: allowPrivilegeEscalation false (so's default); seccomp:unconfined not mapped")
                == true)
        #expect(report.first { $0.key == "mem_swappiness" }?.detail.contains("kubelet") == true)
    }

    /// Compose's pre-`deploy:` keys map like their `deploy:` counterparts; `deploy:` wins where both are given.
    @Test func legacyResourceKeysMapLikeDeploy() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  a:\n    image: x\n    cpus: 0.5\n    mem_limit: 256m\n    mem_reservation: 128m\n    scale: 3\n"
                + "  b:\n    image: y\n    mem_limit: 1g\n    scale: 5\n    deploy: {replicas: 2, resources: {limits: {memory: 2g}}}\n"
        )
        let containers = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]
        let a = containers?[0]?["resources"]
        let b = containers?[1]?["resources"]
        #expect(
            a?["limits"]?["cpu"]?.string == "500m" && a?["limits"]?["memory"]?.string == "256Mi"
                && a?["requests"]?["memory"]?.string == "128Mi")
        #expect(b?["limits"]?["memory"]?.string == "2Gi")
        // One pod (laconic layout): the largest replica count of its services.
        #expect(m.object("Deployment")?["spec"]?["replicas"]?.int == 3)
    }

    @Test func pullPolicyMapsUnlessTheSpecSetsOne() throws {
        let compose =
            "services:\n  a:\n    image: x\n    pull_policy: always\n  b:\n    image: y\n    pull_policy: never\n  c:\n    image: z\n    pull_policy: weird\n"
        let containers = try renderSnippet(compose: compose).object("Deployment")?["spec"]?["template"]?["spec"]?[
            "containers"]
        #expect([0, 1, 2].map { containers?[$0]?["imagePullPolicy"]?.string } == ["Always", "Never", "IfNotPresent"])
        let spec = try renderSnippet(compose: compose, spec: "image-pull-policy: Never\n").object("Deployment")?[
            "spec"]?["template"]?["spec"]?["containers"]
        #expect(spec?[0]?["imagePullPolicy"]?.string == "Never")
    }

    @Test func hooksBecomeLifecycleExec() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  a:\n    image: x\n    post_start:\n      - command: [touch, /ready]\n    pre_stop:\n      - command: nginx -s quit\n"
        )
        let lifecycle = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["lifecycle"]
        #expect(lifecycle?["postStart"]?["exec"]?["command"]?[1]?.string == "/ready")
        #expect(lifecycle?["preStop"]?["exec"]?["command"]?[2]?.string == "quit")
    }

    @Test func composeAnnotationsGoOnThePodAndTheSpecWins() throws {
        let compose =
            "services:\n  a:\n    image: x\n    annotations: {team.example/owner: web, keep: \"1\", \"bad key\": x}\n"
        let m = try renderSnippet(compose: compose, spec: "annotations:\n  keep: \"2\"\n")
        let a = m.object("Deployment")?["spec"]?["template"]?["metadata"]?["annotations"]
        #expect(a?["team.example/owner"]?.string == "web" && a?["keep"]?.string == "2" && a?["bad key"] == nil)
    }

    @Test func dnsSearchAndOptionsJoinTheDNSConfig() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  a:\n    image: x\n    dns: 9.9.9.9\n    dns_search: [corp.example]\n    dns_opt: [\"ndots:2\", edns0]\n"
        )
        let d = m.object("Deployment")?["spec"]?["template"]?["spec"]?["dnsConfig"]
        #expect(d?["nameservers"]?[0]?.string == "9.9.9.9" && d?["searches"]?[0]?.string == "corp.example")
        #expect(
            d?["options"]?[0]?["name"]?.string == "ndots" && d?["options"]?[0]?["value"]?.string == "2"
                && d?["options"]?[1]?["value"] == nil)
    }

    @Test func aRequestAboveTheDefaultLimitRaisesTheLimit() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  a:\n    image: x\n    deploy:\n      resources:\n        reservations: {cpus: '2', memory: 1G}\n"
        )
        let r = m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["resources"]
        #expect(r?["requests"]?["memory"]?.string == "1Gi" && r?["limits"]?["memory"]?.string == "1Gi")
        #expect(r?["requests"]?["cpu"]?.string == "2" && r?["limits"]?["cpu"]?.string == "2")
        let small = try renderSnippet(compose: "services:\n  a:\n    image: x\n")
        #expect(
            small.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["resources"]?["limits"]?[
                "memory"]?.string == "512Mi")
    }
}
