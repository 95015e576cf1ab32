import Foundation
import SoBasics
import SoCompose
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoRender

/// A deployment directory written by hand, loaded into a model (no render).
func loadSnippet(compose: String, spec extra: String = "", stack: String = "name: s\npods: [p]\n") throws
    -> DeploymentModel
{
    let t = try TempDir("so-plan")
    defer { t.cleanup() }
    try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
    try t.write("stack.yml", stack)
    try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n" + extra)
    try t.write("config.env", "")
    try t.write("compose/docker-compose-p.yml", compose)
    return try DeploymentLoader.load(
        t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
}

private func caught(_ body: () throws -> Void) -> SoError? {
    do { try body() } catch let e as SoError { return e } catch { return nil }
    return nil
}

/// A spec.yml decoded as `deploy create` decodes it.
func spec(_ text: String) throws -> Spec {
    let root = try #require(try YAMLFile.parse(text, file: "spec.yml"))
    return try Spec.decode(root, text: text, path: "spec.yml", diagnostics: DiagnosticSink())
}

@Suite struct PortPlanTests {
    @Test func exposeIsParsedOnceWithRangesAndProtocols() throws {
        let m = try loadSnippet(
            compose: "services:\n  a:\n    image: x\n    expose: [\"8000-8002\", \"53/udp\", 9000]\n")
        let e = m.pods[0].compose.services[0].expose
        #expect(e.map(\.containerPort) == [8000, 8001, 8002, 53, 9000])
        #expect(e.map(\.proto) == [.tcp, .tcp, .tcp, .udp, .tcp])
        let plan = PortPlan(m)
        #expect(
            plan.service("a")?.listens.map(\.description) == ["8000/tcp", "8001/tcp", "8002/tcp", "53/udp", "9000/tcp"])
    }

    @Test func badExposeIsAnErrorWithTheLine() throws {
        for bad in ["\"80:80\"", "\"53/icmp\"", "http", "\"9-1\""] {
            let e = try #require(
                caught { _ = try loadSnippet(compose: "services:\n  a:\n    image: x\n    expose:\n      - \(bad)\n") },
                "\(bad)")
            #expect(e.message.hasPrefix("invalid exposed port"), "\(bad)")
            #expect(e.location?.line == 5, "\(bad)")
        }
    }

    @Test func oneTCPAndOneUDPPortAreTwoPortsNotADuplicate() throws {
        let m = try loadSnippet(
            compose:
                "services:\n  dns:\n    image: x\n    ports: [\"53\", \"53/udp\"]\n    expose: [\"53/udp\", \"53\"]\n")
        #expect(PortPlan(m).service("dns")?.listens == [PortPlan.Port(53, .tcp), PortPlan.Port(53, .udp)])
        let svc = try renderSnippet(
            compose: "services:\n  dns:\n    image: x\n    ports: [\"53\", \"53/udp\"]\n    expose: [\"53/udp\"]\n"
        ).object("Service", "dns")
        #expect(svc?["spec"]?["ports"]?[0]?["name"]?.string == "tcp-53")
        #expect(svc?["spec"]?["ports"]?[1]?["name"]?.string == "udp-53")
        #expect(svc?["spec"]?["ports"]?[2] == nil)
    }

    @Test func publicationOfHostPorts() throws {
        let m = try loadSnippet(
            compose:
                "services:\n  a:\n    image: x\n    ports: [\"80\", \"30080:8080\", \"8443:443\", \"9000-9010:9000\"]\n"
        )
        let pub = try #require(PortPlan(m).service("a")?.published)
        #expect(
            pub.map(\.publication).map {
                if case .unpublished(let h, _) = $0 { return "unpublished \(h)" } else { return "\($0)" }
            }
                == ["clusterOnly", "nodePort(30080)", "unpublished 8443", "clusterOnly"])
        let privileged = try loadSnippet(
            compose: "services:\n  a:\n    image: x\n    ports: [\"8443:443\"]\n",
            spec: "security:\n  pod-security: privileged\n")
        #expect(PortPlan(privileged).service("a")?.published.map(\.publication) == [.hostPort(8443)])
        #expect(pub[3].port.hostRange == 9000...9010)
    }

    @Test func clashingContainerPortsSplitTheServiceOut() throws {
        let m = try loadSnippet(
            compose:
                "services:\n  a:\n    image: x\n    ports: [\"5000\"]\n  b:\n    image: y\n    expose: [\"5000\", \"6000\"]\n"
        )
        let plan = PortPlan(m)
        #expect(plan.service("a")?.component == "p" && plan.service("a")?.isSplit == false)
        #expect(plan.service("b")?.component == "p-b" && plan.service("b")?.clashes == [PortPlan.Port(5000)])
    }

    @Test func routesResolveToComponentsAndAddContainerPorts() throws {
        let proxy =
            "network:\n  http-proxy:\n    - host-name: h.localhost\n      routes:\n        - {path: /, proxy-to: 'b:6000'}\n"
        let m = try loadSnippet(
            compose:
                "services:\n  a:\n    image: x\n    ports: [\"5000\"]\n  b:\n    image: y\n    expose: [\"5000\", \"6000\"]\n",
            spec: proxy)
        let plan = PortPlan(m)
        #expect(plan.problems.isEmpty)
        #expect(plan.routes.map(\.component) == ["p-b"])
        #expect(plan.proxiedPorts("b") == [6000])
        #expect(plan.proxiedComponents.map(\.component) == ["p-b"])
    }

    @Test func routeProblemsAreCollected() throws {
        let proxy =
            "network:\n  http-proxy:\n    - host-name: h.localhost\n      routes:\n        - {path: /, proxy-to: 'a:81'}\n        - {path: /x, proxy-to: 'nosuch:80'}\n"
        let plan = PortPlan(
            try loadSnippet(compose: "services:\n  a:\n    image: x\n    ports: [\"80\"]\n", spec: proxy))
        #expect(
            plan.problems.map(\.message) == [
                "http-proxy route / → a:81: service 'a' has no port 81",
                "http-proxy route /x → nosuch:80: no service 'nosuch' in the stack",
            ])
        #expect(plan.problems[0].hint == "its ports: 80")
    }

    @Test func proxyToIsParsedOnce() throws {
        let decoded = try spec(
            "stack: s\ndeploy-to: k8s-kind\nnetwork:\n  http-proxy:\n    - host-name: h\n      routes:\n        - proxy-to: web:8080\n"
        )
        #expect(decoded.httpProxy[0].routes[0].service == "web" && decoded.httpProxy[0].routes[0].port == 8080)
        for bad in ["web", "web:", ":80", "web:80:1", "web:http", "web:70000", "web:-1"] {
            let text =
                "stack: s\ndeploy-to: k8s-kind\nnetwork:\n  http-proxy:\n    - host-name: h\n      routes:\n        - proxy-to: '\(bad)'\n"
            let e = try #require(caught { _ = try spec(text) }, "\(bad)")
            #expect(e.message.contains("must be SERVICE:PORT"), "\(bad)")
            #expect(e.location?.line == 7, "\(bad)")
        }
    }

    @Test func dependencyWaitsKnockOnTheFirstPlannedPort() throws {
        let m = try loadSnippet(
            compose:
                "services:\n  db:\n    image: x\n    expose: [\"5432\"]\n  app:\n    image: y\n    depends_on: [db]\n",
            stack: "name: s\npods: [p]\npod-per-service: true\n")
        let app = try #require(m.pods[0].compose.services.first { $0.name == "app" })
        #expect(DependencyWait.targets(app, ports: PortPlan(m)).map(\.1) == [5432])
    }

    /// The wait's image is busybox unless the spec's `wait-image` names one (a host that cannot pull it).
    @Test func theWaitImageIsTheSpecsWhenItNamesOne() throws {
        let compose =
            "services:\n  db:\n    image: db-image\n    expose: [\"5432\"]\n  app:\n    image: app-image\n    depends_on: [db]\n"
        func waitImages(_ extra: String) throws -> [String] {
            let m = try Renderer.render(
                try loadSnippet(compose: compose, spec: extra, stack: "name: s\npods: [p]\npod-per-service: true\n"))
            let lines: [Substring] = m.objects.flatMap { $0.yaml().split(separator: "\n") }
            let images: [String] = lines.filter { $0.contains("image:") }.map { line in
                String(line.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces)
            }
            return images.filter { $0 != "db-image" && $0 != "app-image" }
        }
        let plain = try waitImages("")
        #expect(plain == ["busybox:1.36"], "\(plain)")
        #expect(try waitImages("wait-image: mirror.internal/busybox:1.36\n") == ["mirror.internal/busybox:1.36"])
    }

    @Test func hostNetworkPortsAreKindPorts() throws {
        let m = try loadSnippet(
            compose: "services:\n  a:\n    image: x\n    network_mode: host\n    ports: [\"5353/udp\", \"9100\"]\n")
        #expect(PortPlan(m).kindPorts == [.init(port: 5353, proto: .udp), .init(port: 9100, proto: .tcp)])
    }
}

@Suite struct ServiceNameTests {
    /// Plain compose: `web` serves 8080 without declaring it; `client` fetches http://web:8080.
    @Test func aServiceWithoutPortsGetsAHeadlessService() throws {
        let t = try TempDir("so-headless")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\npod-per-service: true\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n")
        try t.write("config.env", "")
        try t.write(
            "compose/docker-compose-p.yml",
            """
            services:
              web:
                image: python:3-alpine
                command: python -m http.server 8080
              client:
                image: busybox
                command: wget -qO- http://web:8080
                restart: always
              migrate:
                image: busybox
                restart: "no"
            """)
        let model = try DeploymentLoader.load(
            t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
        let m = try Renderer.render(model)
        let web = try #require(m.object("Service", "web"))
        #expect(web["spec"]?["clusterIP"]?.string == "None")
        #expect(web["spec"]?["ports"] == nil)
        #expect(web["spec"]?["selector"]?["app.kubernetes.io/component"]?.string == "web")
        #expect(m.object("Service", "client")?["spec"]?["clusterIP"]?.string == "None")
        // A one-shot service runs as a Job: nothing to answer to.
        #expect(!m.has("Service", "migrate"))
        #expect(PortPlan(model).services.map(\.reach) == [.headless, .headless, .none])
        let report = MappingReport.build(model, plan: PortPlan(model))
        #expect(
            report.contains {
                $0.service == "web" && $0.key == "(name)" && $0.detail.hasPrefix("headless Service 'web'")
            })
        #expect(!report.contains { $0.service == "migrate" && $0.key == "(name)" })
    }

    @Test func laconicPodServicesWithoutPortsAnswerToTheirNameToo() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  setup:\n    image: x\n    labels: {laconic.init-container: \"true\"}\n  db:\n    image: y\n  app:\n    image: z\n    ports: [\"80\"]\n"
        )
        let db = try #require(m.object("Service", "db"))
        #expect(db["spec"]?["clusterIP"]?.string == "None")
        #expect(db["spec"]?["selector"]?["app.kubernetes.io/component"]?.string == "p")
        #expect(m.object("Service", "app")?["spec"]?["clusterIP"] == nil)
        #expect(!m.has("Service", "setup"))
        // Siblings in one pod still reach each other on localhost (laconic-so's rewrite).
        let env = try renderSnippet(
            compose: "services:\n  db:\n    image: y\n  app:\n    image: z\n    environment: {DB: 'db:5432'}\n")
        let container = env.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[1]
        #expect(container?["env"]?[0]?["value"]?.string == "localhost:5432")
    }
}

@Suite struct NodePortTests {
    /// reth publishes 30303 over TCP and UDP: two Services could not both hold nodePort 30303.
    @Test func tcpAndUDPOnOneHostPortShareOneService() throws {
        let m = try renderSnippet(
            compose:
                "services:\n  reth:\n    image: x\n    ports: [\"30303:30303\", \"30303:30303/udp\", \"30304:30304\"]\n"
        )
        let np = try #require(m.object("Service", "laconic-d-nodeport-30303"))
        let ports = try #require(np["spec"]?["ports"])
        #expect(
            ports[0]?["name"]?.string == "tcp-30303" && ports[0]?["protocol"]?.string == "TCP"
                && ports[0]?["nodePort"]?.int == 30303)
        #expect(
            ports[1]?["name"]?.string == "udp-30303" && ports[1]?["protocol"]?.string == "UDP"
                && ports[1]?["nodePort"]?.int == 30303)
        #expect(ports[2] == nil)
        #expect(!m.has("Service", "laconic-d-nodeport-30303-tcp") && !m.has("Service", "laconic-d-nodeport-30303-udp"))
        // One protocol keeps laconic-so's name.
        #expect(m.has("Service", "laconic-d-nodeport-30304-tcp"))
        #expect(m.objects.filter { $0.kind == "Service" && $0.name.contains("nodeport") }.count == 2)
    }

    @Test func oneHostPortForTwoServicesIsAnError() throws {
        let e = try #require(
            caught {
                _ = try renderSnippet(
                    compose:
                        "services:\n  a:\n    image: x\n    ports: [\"30303:30303\"]\n  b:\n    image: y\n    ports: [\"30303:30303/udp\"]\n"
                )
            })
        #expect(e.message == "services 'a' and 'b' both publish host port 30303 (one NodePort serves one service)")
        #expect(e.location?.line == 5 && e.hint?.contains("network.ports") == true)
    }

    @Test func oneHostPortForTwoContainerPortsIsAnError() throws {
        let e = try #require(
            caught {
                _ = try renderSnippet(
                    compose: "services:\n  a:\n    image: x\n    ports: [\"30080:80\", \"30080:8080\"]\n")
            })
        #expect(e.message == "service 'a' publishes host port 30080/tcp for two container ports")
    }
}

@Suite struct SpecNetworkPortsTests {
    static let compose =
        "services:\n  web:\n    image: x\n    ports: [\"80\"]\n  dns:\n    image: y\n    ports: [\"53/udp\"]\n"

    @Test func specPortsAreParsedWithTheirLine() throws {
        let decoded = try spec(
            "stack: s\ndeploy-to: k8s-kind\nnetwork:\n  ports:\n    web:\n      - '30080:80'\n      - target: 443\n        published: 8443\n    idle:\n"
        )
        #expect(decoded.ports.map(\.service) == ["web", "idle"])
        // Kept as written at load; parsed once the deployment's values are known (here: none).
        #expect(decoded.ports[0].entries.map(\.written) == ["30080:80", "8443:443"])
        #expect(
            try ComposePorts.parse(decoded.ports[0].entries, environment: [:])
                == [
                    ComposePort(hostPort: 30080, containerPort: 80, raw: "30080:80"),
                    ComposePort(hostPort: 8443, containerPort: 443, raw: "8443:443"),
                ])
        #expect(decoded.ports[0].line == 5 && decoded.ports[1].entries.isEmpty)
        for (bad, line) in [
            ("      - '80:80:80:80'\n", 6), ("      - 'x'\n", 6), ("      - '30080:80/icmp'\n", 6),
            ("      - '70000'\n", 6),
        ] {
            let e = try #require(
                caught {
                    _ = try ComposePorts.parse(
                        try spec("stack: s\ndeploy-to: k8s-kind\nnetwork:\n  ports:\n    web:\n" + bad).ports[0]
                            .entries, environment: [:])
                }, "\(bad)")
            #expect(e.message.hasPrefix("invalid port"), "\(bad)")
            #expect(e.location?.file == "spec.yml" && e.location?.line == line, "\(bad)")
        }
    }

    /// laconic-so replaces a listed service's ports: with the spec's list; so does the model.
    @Test func specPortsReplaceComposePortsInTheModel() throws {
        let m = try loadSnippet(compose: Self.compose, spec: "network:\n  ports:\n    web: ['30080:8080']\n")
        let web = try #require(m.pods[0].compose.services.first { $0.name == "web" })
        #expect(web.ports.map(\.raw) == ["30080:8080"])
        // Services the spec does not list keep their compose ports.
        #expect(m.pods[0].compose.services.first { $0.name == "dns" }?.ports.map(\.raw) == ["53/udp"])
        let plan = PortPlan(m)
        #expect(plan.nodePorts.map(\.nodePort) == [30080])
        #expect(plan.kindPorts == [.init(port: 30080, proto: .tcp)])
    }

    @Test func aNodePortFromTheSpecIsRenderedAndReported() throws {
        let model = try loadSnippet(compose: Self.compose, spec: "network:\n  ports:\n    web: ['30080:80']\n")
        let m = try Renderer.render(model)
        let np = try #require(m.object("Service", "laconic-d-nodeport-80-tcp"))
        #expect(np["spec"]?["ports"]?[0]?["nodePort"]?.int == 30080)
        #expect(m.warnings.isEmpty)
        let ports = MappingReport.build(model, plan: PortPlan(model)).first { $0.service == "web" && $0.key == "ports" }
        #expect(
            ports?.detail
                == "containerPorts and ClusterIP Service 'web' (the spec's network.ports): 80/tcp with NodePort 30080 (kind maps host port 30080)"
        )
    }

    @Test func anUnknownServiceInSpecPortsIsAWarningWithASuggestion() throws {
        let t = try TempDir("so-specports")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\nnetwork:\n  ports:\n    wbe: ['30080:80']\n")
        try t.write("config.env", "")
        try t.write("compose/docker-compose-p.yml", Self.compose)
        let sink = DiagnosticSink()
        _ = try DeploymentLoader.load(t.path, fs: LocalFileSystem(), diagnostics: sink)
        let w = try #require(sink.all.first { $0.message.contains("network.ports names 'wbe'") })
        #expect(w.hint == "did you mean 'web'?" && w.location?.line == 5)
    }

    /// Outside the NodePort range, on kind, in a namespace the spec makes privileged: the container's
    /// hostPort, which kind maps from the host.
    @Test func aHostPortOutsideTheRangeIsAHostPortOnKind() throws {
        let model = try loadSnippet(
            compose: Self.compose,
            spec:
                "network:\n  ports:\n    web: ['127.0.0.1:8080:80']\n    dns: ['5353:53/udp']\nsecurity:\n  pod-security: privileged\n"
        )
        let plan = PortPlan(model)
        #expect(plan.service("web")?.published.map(\.publication) == [.hostPort(8080)])
        #expect(
            plan.kindPorts == [
                .init(port: 8080, proto: .tcp, listenAddress: "127.0.0.1"), .init(port: 5353, proto: .udp),
            ])
        let m = try Renderer.render(model)
        let pod = m.object("Deployment")?["spec"]?["template"]?["spec"]
        #expect(pod?["containers"]?[0]?["ports"]?[0]?["hostPort"]?.int == 8080)
        #expect(pod?["containers"]?[1]?["ports"]?[0]?["hostPort"]?.int == 5353)
        #expect(m.object("Deployment")?["spec"]?["strategy"]?["type"]?.string == "Recreate")
        #expect(
            m.object("Namespace")?["metadata"]?["labels"]?["pod-security.kubernetes.io/enforce"]?.string == "privileged"
        )
        #expect(
            m.warnings.contains {
                $0.message.hasPrefix(
                    "service 'web' binds host port 8080/tcp on the kind node (hostPort): its namespace admits privileged pods"
                )
            })
        let yaml = KindConfig(volumes: [], mountRoot: nil, hostPorts: plan.kindPorts).yaml()
        #expect(
            yaml.contains("      - containerPort: 8080\n        hostPort: 8080\n        listenAddress: 127.0.0.1\n"))
        #expect(yaml.contains("      - containerPort: 5353\n        hostPort: 5353\n        protocol: UDP\n"))
    }

    /// Without the spec's opt-in the namespace stays baseline (which forbids host ports): reported, with the way to publish it.
    @Test func aHostPortOutsideTheRangeKeepsTheNamespaceBaseline() throws {
        let model = try loadSnippet(compose: Self.compose, spec: "network:\n  ports:\n    web: ['8080:80']\n")
        let m = try Renderer.render(model)
        #expect(
            m.object("Namespace")?["metadata"]?["labels"]?["pod-security.kubernetes.io/enforce"]?.string == "baseline")
        #expect(
            m.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["ports"]?[0]?["hostPort"] == nil)
        #expect(
            m.warnings.contains {
                $0.message.contains(
                    "pod security baseline forbids the hostPort it needs; 'security: {pod-security: privileged}' in the spec publishes it on kind"
                )
            }, "\(m.warnings)")
    }

    @Test func hostPortsAreNotUsedWhereTheyWouldBreakSomething() throws {
        // On k8s: not published (a NodePort in range is the way), as before.
        let k8s = try renderSnippet(
            compose: Self.compose, spec: "network:\n  ports:\n    web: ['8080:80']\n", deployTo: "k8s")
        #expect(
            k8s.object("Deployment")?["spec"]?["template"]?["spec"]?["containers"]?[0]?["ports"]?[0]?["hostPort"] == nil
        )
        #expect(
            k8s.warnings.contains {
                $0.message == "host port 8080 of service 'web' is not published (a NodePort must be in 30000–32767)"
            })
        // 80 and 443 on kind belong to the ingress controller.
        let ingress = try renderSnippet(compose: Self.compose, spec: "network:\n  ports:\n    web: ['80:80']\n")
        #expect(
            ingress.warnings.contains {
                $0.message
                    == "host port 80 of service 'web' is not published: the ingress controller's on kind; route to it with network.http-proxy"
            })
        #expect(
            ingress.object("Namespace")?["metadata"]?["labels"]?["pod-security.kubernetes.io/enforce"]?.string
                == "baseline")
        // A pod-security level the spec chose is kept.
        let baseline = try renderSnippet(
            compose: Self.compose,
            spec: "security:\n  pod-security: baseline\nnetwork:\n  ports:\n    web: ['8080:80']\n")
        #expect(
            baseline.warnings.contains {
                $0.message.contains("not published: pod security baseline forbids the hostPort it needs")
            }, "\(baseline.warnings)")
        #expect(baseline.object("Deployment")?["spec"]?["strategy"]?["type"]?.string == "RollingUpdate")
    }
}
