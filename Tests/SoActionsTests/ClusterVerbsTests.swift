import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy
@testable import SoWorkspace

// The ingress controller, progress, stop and the observe verbs, kind targets, resync and cluster
// selection against the fake cluster (start itself: ClusterTests.swift).

@Suite struct IngressControllerTests {
    static func withProxy() async throws -> ClusterHarness {
        let c = try await ClusterHarness()
        // Where the cluster's lock (the controller's install) lives, as on every cluster.
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: "kube-system"))
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with: """
                    network:
                      http-proxy:
                        - host-name: example.localhost
                          routes:
                            - path: /
                              proxy-to: web:80

                    """))
        return c
    }

    func start(_ c: ClusterHarness, image: String? = nil) async throws {
        var options = c.options
        options.performClusterManagement = true
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: options, timeout: 30, progress: .plain))
    }

    @Test func installsOnceWhenAnIngressNeedsIt() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "ghcr.io/laconicnetwork/caddy-ingress:latest")
        let cls = try #require(c.cluster.object("IngressClass", "caddy"))
        #expect(cls.annotations["ingressclass.kubernetes.io/is-default-class"] == "true")
        #expect(c.cluster.object("ClusterRoleBinding", "so:caddy-ingress-controller") != nil)
        // The controller is installed before the deployment's own objects.
        let applies = c.cluster.calls.filter { $0.hasPrefix("apply ") }
        #expect(
            applies.firstIndex { $0.contains("caddy-ingress-controller") }! < applies.firstIndex {
                $0.contains("Ingress \(c.id)") || $0.hasPrefix("apply Ingress")
            }!)
        let before = c.cluster.calls.count
        try await start(c)
        // A ready controller is left alone.
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") && $0.contains("caddy") })
        #expect(c.h.console.stdout.contains("controller caddy-system/caddy-ingress-controller is ready"))
    }

    /// A cluster whose default IngressClass is another controller's (ingress-nginx installed per kind's docs):
    /// the Ingress names that class and Caddy is not installed beside it.
    @Test func theClustersDefaultClassIsUsedAndCaddyIsNotInstalledBesideIt() async throws {
        let c = try await Self.withProxy()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "networking.k8s.io/v1", kind: "IngressClass", name: "nginx",
                annotations: [("ingressclass.kubernetes.io/is-default-class", "true")],
                body: [("spec", .map([("controller", .string("k8s.io/ingress-nginx"))]))]))
        try await start(c)
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        let ingress = try #require(c.cluster.object("Ingress", "\(c.id)-ingress", namespace: c.id))
        #expect(ingress.at("spec", "ingressClassName")?.string == "nginx")
        #expect(!c.h.console.stderr.contains("does not have"), "\(c.h.console.stderr)")
    }

    /// A class the cluster does not have is warned about, naming the classes it has; a TLS Secret the spec names
    /// that does not exist is warned about too.
    @Test func aMissingClassAndAMissingTLSSecretAreWarned() async throws {
        let c = try await Self.withProxy()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "networking.k8s.io/v1", kind: "IngressClass", name: "nginx",
                body: [("spec", .map([("controller", .string("k8s.io/ingress-nginx"))]))]))
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(of: "network:\n", with: "network:\n  tls: {secret: example-cert}\n")
                + "ingress-class: traefik\n")
        try await start(c)
        let warnings = c.ctx.diagnostics.all.map(\.message)
        #expect(
            warnings.contains {
                $0.contains("names the class 'traefik', which this cluster does not have (it has nginx)")
            }, "\(warnings)")
        #expect(
            warnings.contains { $0.contains("TLS Secret \(c.id)/example-cert does not exist") },
            "\(warnings) \(c.cluster.calls.filter { $0.contains("Secret") })")
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        // An issuer where cert-manager is not installed; then installed, without that issuer.
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.tmp.read("dep/spec.yml").replacingOccurrences(
                of: "tls: {secret: example-cert}", with: "tls: {issuer: staging}"))
        try await start(c)
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains("ClusterIssuer staging for its certificate, but this cluster has no cert-manager")
            })
        try c.cluster.seed(
            KubeObject(
                apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
                name: "certificates.cert-manager.io"))
        try await start(c)
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains(
                    "asks cert-manager's ClusterIssuer staging for its certificate, which does not exist")
            })
    }

    @Test func notInstalledWithoutIngressOrClusterManagement() async throws {
        let plain = try await ClusterHarness()
        try await start(plain)
        #expect(plain.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        let c = try await Self.withProxy()
        _ = try await c.start()  // --skip-cluster-management
        #expect(c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system") == nil)
        #expect(c.cluster.object("Ingress", "\(c.id)-ingress", namespace: c.id) != nil)
    }

    @Test func specImageRollsTheController() async throws {
        let c = try await Self.withProxy()
        try await start(c)
        let spec = try c.h.tmp.read("dep/spec.yml")
        try c.h.tmp.write("dep/spec.yml", spec + "caddy-ingress-image: example.org/caddy-ingress:2\n")
        try await start(c)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "example.org/caddy-ingress:2")
    }
}

@Suite struct LiveProgressTests {
    /// On a terminal the wait redraws one status line (spinner, elapsed); in CI it prints a line per change.
    @Test(arguments: [true, false]) func waitProgress(terminal: Bool) async throws {
        let c = try await ClusterHarness(healthy: false)
        var ctx = c.ctx
        let console = CapturedConsole(isTerminal: terminal)
        ctx.console = console
        await #expect(throws: SoError.self) {
            _ = try await StartAction(ctx).run(
                StartRequest(directory: "dep", cluster: c.options, timeout: 10, progress: .auto))
        }
        let waits = console.statuses.filter { $0.contains("waiting for Deployment") }
        if terminal {
            #expect(waits.count >= 4, "\(console.statuses)")
            #expect(waits.last?.hasSuffix("(9s)") == true, "\(waits)")
            #expect(
                console.statuses.contains { $0.contains("applied 2/2: 1 Deployment, 1 Job") }, "\(console.statuses)")
            #expect(!console.stdout.contains("waiting Deployment"))
        } else {
            #expect(console.statuses.isEmpty)
            // One line for the state, not one per poll.
            #expect(console.stdout.components(separatedBy: "waiting Deployment").count - 1 == 1, "\(console.stdout)")
        }
    }
}

@Suite struct StopAndObserveTests {
    @Test func stopKeepsVolumesAndSecretsUnlessAsked() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(of: "config:\n", with: "config:\n  K: $generate:hex:8$\n")
        )
        _ = try await c.start()
        try await StopAction(c.ctx).run(StopRequest(directory: "dep", cluster: c.options, volumeGuard: nil))
        let left = c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" }.sorted()
        #expect(
            left == ["Namespace \(c.id)", "PersistentVolumeClaim \(c.id)-web-data", "Secret \(c.id)-generated-secrets"])
        _ = try await c.start()
        try await StopAction(c.ctx).run(
            StopRequest(
                directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil))
        #expect(c.cluster.all.isEmpty)
    }

    @Test func statusPsLogsExecRestart() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: c.id,
                labels: [
                    ("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/component", "example"),
                ],
                body: [
                    (
                        "spec",
                        .map([
                            (
                                "containers",
                                .list([
                                    .map([
                                        ("name", .string("web")), ("image", .string("nginx")),
                                        ("ports", .list([.map([("containerPort", .int(80))])])),
                                    ])
                                ])
                            )
                        ])
                    )
                ]))
        c.cluster.update("Pod", "web-abc", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "phase": .string("Running"), "podIP": .string("10.0.0.7"),
                "containerStatuses": .array([
                    .object(["name": .string("web"), "ready": .bool(true), "restartCount": .number(2)])
                ]),
            ])
            p = .object(o)
        }
        let status = try await ObserveAction(c.ctx).status("dep", cluster: c.options)
        #expect(status.ready)
        #expect(status.workloads.map(\.name).sorted() == ["\(c.id)-deployment", "\(c.id)-job-example-migrate"])
        let ps = try await ObserveAction(c.ctx).ps("dep", cluster: c.options)
        #expect(
            ps.count == 1 && ps[0].phase == "Running" && ps[0].ready == "1/1" && ps[0].restarts == 2
                && ps[0].ports == ["web:80"])

        c.cluster.podLogs["\(c.id)/web-abc/web"] = "one\ntwo\nthree\n"
        try await ObserveAction(c.ctx).logs(.init(directory: "dep", cluster: c.options, tail: 2))
        #expect(c.h.console.stdout.hasSuffix("web | two\nweb | three"))

        c.h.processes.expect(
            [
                "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "web-abc", "-c",
                "web", "--", "nginx", "-t",
            ], exitCode: 3)
        let code = try await ObserveAction(c.ctx).exec(
            "dep", cluster: c.options, service: "web", command: ["nginx", "-t"], interactive: false, tty: false)
        #expect(code == 3)
        #expect(c.h.processes.unexpected.isEmpty)
        await #expect(throws: SoError.self) {
            _ = try await ObserveAction(c.ctx).exec(
                "dep", cluster: c.options, service: "nope", command: [], interactive: false, tty: false)
        }

        // shell: the first service by default, interactive, in /workspace when it exists.
        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "-i", "web-abc",
            "-c", "web", "--", "sh", "-c",
            "cd /workspace 2>/dev/null || true; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi",
        ])
        #expect(try await ObserveAction(c.ctx).shell("dep", cluster: c.options, service: nil) == 0)
        #expect(c.h.processes.unexpected.isEmpty)

        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "port-forward",
            "service/web", "8080:80",
        ])
        #expect(
            try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["8080:80"])
                == 0)
        await #expect(throws: SoError.self) {
            _ = try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["x:80"])
        }

        try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: true, timeout: 30)
        let d = try #require(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id))
        #expect(d.at("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")?.string != nil)
    }
}

@Suite struct KindTargetTests {
    @Test func createsTheClusterWhenNoneExistsAndReusesItLater() async throws {
        let c = try await ClusterHarness()
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")  // again, under the host's lock
        p.expect(["kind", "create", "cluster", "--name", clusterID, "--config", c.h.path("dep/kind-config.yml")])
        p.expect(
            ["kind", "get", "kubeconfig", "--name", clusterID],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        // The example's images are public (no :local tag): no docker calls, nothing to load.
        do {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain))
        } catch {
            Issue.record("\(error) \(p.calls.map(\.arguments))")
            return
        }
        #expect(p.unexpected.isEmpty, "\(p.unexpected) \(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))

        // A second deployment on the same host reuses the running cluster, whatever its name.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(
            ["kind", "get", "kubeconfig", "--name", "shared"],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(c.h.console.stdout.contains("using the host's kind cluster 'shared'"))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty)
    }
}

extension KindTargetTests {
    /// kind writes `kind-<cluster>` into the user's kubeconfig: it is used without asking kind (which
    /// would ask docker twice); a stale entry that does not answer falls back to `kind get kubeconfig`.
    @Test func theUsersKindContextIsUsedAndAStaleOneFallsBackToKind() async throws {
        var c = try await ClusterHarness()
        let p = c.h.processes
        p.missing = []
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "get", "kubeconfig"]) })

        // The user's entry points at a port nothing listens on any more: kind's own kubeconfig is used.
        try c.h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared")
                .replacingOccurrences(of: "127.0.0.1:6443", with: "127.0.0.1:1"))
        let cluster = c.cluster
        var ctx = c.ctx
        ctx.connect = { connection in
            if connection.server.hasSuffix(":1") {
                let gone = FakeCluster()
                for verb in ["get", "create", "apply", "list", "patch", "update", "delete"] {
                    gone.failures[verb] = SoError(
                        "cannot reach the API server \(connection.server) (context \(connection.contextName)): connection refused",
                        hint: "is the cluster running?", exitCode: SoError.exitUnreachable)
                }
                return gone
            }
            return cluster
        }
        c = ClusterHarness(copying: c, ctx: ctx)
        // Listed, the stale context fails, listed again through kind, which prints a kubeconfig that answers.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(
            ["kind", "get", "kubeconfig", "--name", "shared"],
            stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster shared"))

        // The deployment's own cluster in the user's kubeconfig: no kind process at all.
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        try c.h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        let calls = p.calls.count
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
        #expect(p.calls.count == calls, "\(p.calls.dropFirst(calls).map(\.arguments))")
        #expect(c.h.console.stdout.contains("on kind cluster \(clusterID)"))
    }

    /// Reaching the cluster overlaps rendering, but a deployment that does not render creates no cluster.
    @Test func aDeploymentThatDoesNotRenderCreatesNoCluster() async throws {
        let c = try await ClusterHarness()
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with:
                    "network:\n  http-proxy:\n    - host-name: a.localhost\n      routes:\n        - path: /\n          proxy-to: nosuch:80\n"
            ))
        #expect(try c.h.read("dep/spec.yml") != spec)
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        await #expect {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), progress: .plain))
        } throws: { e in
            ((e as? SoError)?.message ?? "").contains("no service 'nosuch'")
        }
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "create"]) }, "\(p.calls.map(\.arguments))")
        #expect(p.unexpected.isEmpty)
        #expect(c.cluster.calls.isEmpty)
    }
}

@Suite struct ResyncTests {
    /// restart refreshes D from the changed stack, re-applies (pruning what left) and rolls the pods.
    @Test func restartResyncsFromTheStackSource() async throws {
        let c = try await ClusterHarness()
        // A private copy of the example stack as the deployment's source.
        let src = c.h.path("src")
        let fs = LocalFileSystem()
        for rel in [
            "stacks/example/stack.yml", "compose/docker-compose-example.yml",
            "compose-jobs/docker-compose-example-migrate.yml",
            "config/example/default.conf", "config/example/index.html",
        ] {
            try fs.write(try fs.readData(Path.join(RepoPaths.root, rel)), to: Path.join(src, rel))
        }
        try await InitAction(c.ctx).run(InitRequest(stack: Path.join(src, "stacks/example"), output: "spec2.yml"))
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "spec2.yml", deploymentDir: "dep2"))
        _ = try await StartAction(c.ctx).run(StartRequest(directory: "dep2", cluster: c.options, progress: .plain))
        let id = try DeploymentFile.load(c.h.path("dep2/deployment.yml"), fs: fs, diagnostics: DiagnosticSink())
            .deploymentID
        #expect(c.cluster.object("Job", "\(id)-job-example-migrate", namespace: id) != nil)

        // The stack drops its job and changes the page.
        try c.h.tmp.write(
            "src/stacks/example/stack.yml",
            try c.h.read("src/stacks/example/stack.yml").replacingOccurrences(
                of: "jobs:\n  - example-migrate\n", with: ""))
        try c.h.tmp.write("src/config/example/index.html", "<p>new</p>\n")
        c.h.processes.expect(
            ["git", "-C", Path.join(src, "stacks/example"), "rev-parse", "--show-toplevel"], exitCode: 128,
            stderr: "fatal: not a git repository")
        try await ResyncAction(c.ctx).run(directory: "dep2", cluster: c.options, pull: true, wait: true, timeout: 30)
        #expect(c.h.console.stdout.contains("is not in a git repository; using it as it is"))
        #expect(try c.h.read("dep2/config/example/index.html") == "<p>new</p>\n")
        #expect(c.h.fs.isFile(c.h.path("dep2/config/example/index.html.bak")))
        #expect(c.cluster.object("Job", "\(id)-job-example-migrate", namespace: id) == nil)
        let cm = try #require(c.cluster.object("ConfigMap", "\(id)-host-path-config-example-index-html", namespace: id))
        #expect(cm["data"]?["index.html"]?.string == "<p>new</p>\n")
        let d = try #require(c.cluster.object("Deployment", "\(id)-deployment", namespace: id))
        #expect(d.at("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt") != nil)
        #expect(c.h.processes.unexpected.isEmpty)
    }
}

/// One cluster-selection rule for every verb: flags > the deployment's own > SO_KUBECONFIG > the host's
/// kind cluster > the current context of $KUBECONFIG; nothing answering is one error naming all of it.
@Suite struct ClusterSelectionTests {
    static func kubeconfig(context: String, server: String = "https://127.0.0.1:6443") -> String {
        ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: context).replacingOccurrences(
            of: "https://127.0.0.1:6443", with: server)
    }

    @Test func theUsersCurrentContextIsTheLastResort() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        // No kind installed (the harness's default): status and list reach $KUBECONFIG's current context.
        let status = try await ObserveAction(c.ctx).status(
            "dep", cluster: ClusterOptions(performClusterManagement: false))
        #expect(status.cluster.contains("prod"), "\(status.cluster)")
        _ = try await ListAction(c.ctx).run(cluster: ClusterOptions(performClusterManagement: false))
    }

    /// In a pod with no kubeconfig: its service account, as kubectl; kubectl is then given no flags (it finds the account itself).
    @Test func thePodsServiceAccountWhenNothingElseWasChosen() async throws {
        let c = try await ClusterHarness(environment: [
            "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
        ])
        var env = c.ctx.environment
        env["SO_SERVICEACCOUNT_DIR"] = c.h.tmp.file("sa")
        var ctx = c.ctx
        ctx.environment = env
        await #expect {
            _ = try await ClusterTargets(ctx: ctx).shared(ClusterOptions(performClusterManagement: false))
        } throws: { e in
            (e as? SoError)?.message.contains("the pod's service account (no token at \(c.h.tmp.file("sa/token")))")
                == true
        }
        try c.h.tmp.write("sa/token", "pod-token")
        try c.h.tmp.write("sa/namespace", "ci")
        let model = try RenderAction(ctx).model("dep")
        let target = try await ClusterTargets(ctx: ctx).find(
            model, ClusterOptions(performClusterManagement: false), allowCreate: false)
        #expect(
            target?.connection.inCluster == true && target?.connection.server == "https://10.96.0.1:443"
                && target?.connection.namespace == "ci")
        #expect(target?.kubectlFlags == [])
        // A kubeconfig, once there, comes first (kubectl's order).
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        #expect(
            try await ClusterTargets(ctx: ctx).shared(ClusterOptions(performClusterManagement: false)).connection
                .contextName == "prod")
    }

    @Test func soKubeconfigComesAfterTheDeploymentsOwnKindCluster() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/nonexistent/ci-kubeconfig"])
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "kind-\(clusterID)"))
        let target = try await ClusterTargets(ctx: c.ctx).find(
            try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false), allowCreate: false)
        #expect(target?.kindCluster == clusterID && target?.kubeconfigFile == nil)
        // Without the deployment's own cluster, SO_KUBECONFIG (here missing: its error names it).
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "other"))
        await #expect {
            _ = try await ClusterTargets(ctx: c.ctx).find(
                try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false),
                allowCreate: false)
        } throws: { ($0 as? SoError)?.message.contains("/nonexistent/ci-kubeconfig") == true }
    }

    @Test func nothingToUseNamesEverythingTried() async throws {
        let c = try await ClusterHarness()
        await #expect {
            _ = try await ObserveAction(c.ctx).status("dep", cluster: ClusterOptions(performClusterManagement: false))
        } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.exitCode == SoError.exitUnreachable
                && e.message.hasPrefix("no cluster to use; tried --kubeconfig/--context (not given)")
                && e.message.contains("SO_KUBECONFIG (not set)") && e.message.contains("kind is not installed")
                && e.message.contains("$KUBECONFIG")
                && (e.hint ?? "").contains("--kubeconfig")
        }
    }

    /// kind installed with its engine stopped (`kind get clusters` fails as it does when docker is down) is not
    /// the end: SO_KUBECONFIG and the user's kubeconfig still answer (a kind deployment sent there is warned
    /// about), and with nothing else the error names kind's failure.
    @Test func aKindWhoseEngineIsDownDoesNotStopTheSearch() async throws {
        let dockerDown =
            "ERROR: failed to list clusters: command \"docker ps -a --filter label=io.x-k8s.kind.cluster\" failed with error: exit status 1"
        var c = try await ClusterHarness()
        c = ClusterHarness(
            copying: c,
            ctx: {
                var x = c.ctx
                x.environment["SO_KUBECONFIG"] = c.h.tmp.file("ci-kubeconfig")
                return x
            }())
        c.h.processes.missing = []
        try c.h.tmp.write("ci-kubeconfig", Self.kubeconfig(context: "ci"))
        let model = try RenderAction(c.ctx).model("dep")
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        let ci = try await ClusterTargets(ctx: c.ctx).find(model, ClusterOptions(), allowCreate: true)
        #expect(ci?.connection.contextName == "ci" && ci?.kindCluster == nil)
        var ctx = c.ctx
        ctx.environment["SO_KUBECONFIG"] = nil
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        let prod = try await ClusterTargets(ctx: ctx).find(model, ClusterOptions(), allowCreate: true)
        #expect(prod?.connection.contextName == "prod")
        #expect(
            ctx.diagnostics.all.contains {
                $0.message.contains("cannot be listed ('kind get clusters' failed: ERROR: failed to list clusters")
                    && $0.message.contains("using context prod")
            },
            "\(ctx.diagnostics.all)")
        // A kubeconfig naming no context (as `kind delete cluster` leaves ~/.kube/config) is as good as none.
        try c.h.tmp.write("user-kubeconfig", "apiVersion: v1\nkind: Config\n")
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        await #expect {
            _ = try await ClusterTargets(ctx: ctx).find(model, ClusterOptions(), allowCreate: true)
        } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message.contains(
                "the deployment's kind cluster '\(model.identity.clusterID)' ('kind get clusters' failed: ERROR: failed to list clusters"
            )
                && e.message.contains("the host's kind clusters (the same)")
                && e.message.contains("(no kubeconfig naming a context)")
                && (e.hint ?? "").contains("or start docker (kind's engine)")
        }
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty,
            "\(c.h.processes.unexpected) \(c.h.processes.pending)")
    }

    /// exec, shell and port-forward hand kubectl exactly the cluster so chose.
    @Test func kubectlGetsTheChosenKubeconfig() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/tmp/ci-kubeconfig-for-test"])
        let target = ClusterTarget(
            connection: ClusterConnection(contextName: "ci", server: "https://127.0.0.1:6443"), kindCluster: nil,
            kubeconfigFile: "/tmp/ci-kubeconfig-for-test")
        #expect(target.kubectlFlags == ["--kubeconfig", "/tmp/ci-kubeconfig-for-test", "--context", "ci"])
        let user = ClusterTarget(
            connection: ClusterConnection(contextName: "kind-x", server: "https://127.0.0.1:6443"), kindCluster: "x")
        #expect(user.kubectlFlags == ["--context", "kind-x"])
        _ = c
    }
}

@Suite struct LocalImageTests {
    /// A deployment whose web image is `cerc/example:local`, on the host's kind cluster `shared` (its context in
    /// the user's kubeconfig), with every program installed.
    static func harness(environment: [String: String] = [:]) async throws -> ClusterHarness {
        let c = try await ClusterHarness(environment: environment)
        let compose = try c.h.read("dep/compose/docker-compose-example.yml")
        try c.h.tmp.write(
            "dep/compose/docker-compose-example.yml",
            compose.replacingOccurrences(of: "image: nginx:1.27-alpine", with: "image: cerc/example:local"))
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        c.h.processes.missing = []
        return c
    }
    /// `docker build` of a `:local` image between two starts: the second finds a new ID, loads the image into
    /// kind, and the Deployment that runs it is applied again with the new ID in its pod template (so its
    /// pods roll onto the rebuilt image), though nothing else changed.
    @Test func aRebuiltLocalImageIsLoadedAndItsDeploymentRolled() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        func start() async throws {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
            #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        }
        func annotation() throws -> String? {
            let d = try #require(c.cluster.all.first { $0.0.type.kind == "Deployment" }?.1)
            return d.at("spec", "template", "metadata", "annotations", "so.dev/image-ids")?.string
        }
        // First start: the node has this build already.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        try await start()
        #expect(try annotation() == "cerc/example:local@sha256:aaa")
        // The same build again: nothing loaded, nothing applied.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        var before = c.cluster.calls.count
        try await start()
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") })
        // Rebuilt: a new ID, loaded into the node, the Deployment applied with it.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:bbb\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        p.expect(["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"])
        before = c.cluster.calls.count
        try await start()
        #expect(
            c.cluster.calls[before...].contains { $0.hasPrefix("apply Deployment") }, "\(c.cluster.calls[before...])")
        #expect(try annotation() == "cerc/example:local@sha256:bbb")
    }

    /// `start --skip-cluster-management` loads no image and stamps no ID; its dry run plans the same start, so
    /// right after it every object is unchanged (the dry run reading IDs the start never stamped said
    /// "would configure" for the Deployment running the local image).
    @Test func theDryRunOfASkipClusterManagementStartStampsNoImageIDs() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let skip = ClusterOptions(performClusterManagement: false)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: skip, timeout: 30, progress: .plain))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        let plan = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: skip, dryRun: true)).plan
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(!plan.isEmpty && plan.allSatisfy { $0.action == .unchanged }, "\(plan.map(\.line))")
    }

    /// A spec `wait-image:` this host has is loaded and its ID stamped on the Deployments that wait with it, and
    /// the dry run stamps the same images start does: right after the start, every object is unchanged.
    @Test func theDryRunStampsTheSpecsWaitImageAsStartDoes() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        try c.h.tmp.write(
            "app/compose.yaml",
            """
            services:
              db:
                image: postgres:17
                ports: ["5432"]
              web:
                image: nginx:1.27
                depends_on: [db]
            """)
        try await InitAction(c.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        try c.h.tmp.write("app.yml", try c.h.read("app.yml") + "wait-image: so-test/wait:1\n")
        // create: the host's cluster, reached by its context afterwards
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "so-test/wait:1"]
        p.expect(inspect, stdout: "sha256:ccc\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "so-test/wait:1",
            ],
            stdout: "sha256:ccc\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "appdep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let web = try #require(
            c.cluster.all.first { $0.0.type.kind == "Deployment" && $0.1.name.hasSuffix("-web-deployment") }?.1)
        #expect(
            web.at("spec", "template", "metadata", "annotations", ImageLoader.annotation)?.string
                == "so-test/wait:1@sha256:ccc")
        p.expect(inspect, stdout: "sha256:ccc\n")
        let plan = try await StartAction(c.ctx).run(
            StartRequest(directory: "appdep", cluster: ClusterOptions(), dryRun: true)
        ).plan
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(!plan.isEmpty && plan.allSatisfy { $0.action == .unchanged }, "\(plan.map(\.line))")
    }

    /// A spec `caddy-ingress-image` this host has (a host that cannot pull the default one) is loaded into kind,
    /// and the controller is installed only once it is there.
    @Test func theSpecsIngressImageIsLoadedBeforeTheControllerIsInstalled() async throws {
        let c = try await IngressControllerTests.withProxy()
        try c.h.tmp.write(
            "dep/spec.yml", try c.h.tmp.read("dep/spec.yml") + "caddy-ingress-image: so-e2e/ingress:local\n")
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["docker", "image", "inspect", "--format", "{{.Id}}", "so-e2e/ingress:local"], stdout: "sha256:ccc\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "so-e2e/ingress:local",
            ],
            exitCode: 1, stderr: "no such image")
        // A load that takes a while (as a real one does): the install must wait for it.
        let loaded = Flag()
        let loadedFirst = Flag()
        p.fallback = { args in
            guard args == ["kind", "load", "docker-image", "so-e2e/ingress:local", "--name", "shared"] else {
                return nil
            }
            try await Task.sleep(for: .milliseconds(300))
            loaded.value = true
            return ProcessResult(exitCode: 0, stdout: "", stderr: "")
        }
        let healthy = c.cluster.onApply
        c.cluster.onApply = { json in
            if json["metadata"]?["name"]?.string == "caddy-ingress-controller", json["kind"]?.string == "Deployment" {
                loadedFirst.value = loaded.value
            }
            healthy?(&json)
        }
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(loaded.value && loadedFirst.value)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "so-e2e/ingress:local")
    }

    /// With KIND_EXPERIMENTAL_PROVIDER=podman the image's ID comes from podman (bare, no `sha256:`, compared with
    /// crictl's), and a rebuilt image reaches the node through an archive: `kind load docker-image` would read
    /// docker's store, which a podman host may not have. The archive is removed afterwards.
    @Test func podmansImagesGoThroughAnArchive() async throws {
        let c = try await Self.harness(environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman"])
        var ctx = c.ctx
        ctx.environment["TMPDIR"] = c.h.tmp.file("tmp")
        let p = c.h.processes
        let inspect = ["podman", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "podman", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        let start = StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain)
        // The node has this build: the same digest, written two ways.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        _ = try await StartAction(ctx).run(start)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        // Rebuilt: saved by podman into an archive, which kind loads.
        final class Archive: @unchecked Sendable {
            var saved: String?
            var loaded: String?
        }
        let archive = Archive()
        // podman would name the short reference localhost/… in its archive: it is saved under the name the node
        // resolves, tagged for the save and untagged after (podman had no such name before).
        p.fallback = { args in
            if args.count == 5, args.starts(with: ["podman", "save", "-o"]), args[4] == "docker.io/cerc/example:local" {
                archive.saved = args[3]
                try "image".write(toFile: args[3], atomically: true, encoding: .utf8)
                return ProcessResult(exitCode: 0)
            }
            if args.count == 6, args.starts(with: ["kind", "load", "image-archive"]),
                args[4...] == ["--name", "shared"]
            {
                archive.loaded = FileManager.default.fileExists(atPath: args[3]) ? args[3] : nil
                return ProcessResult(exitCode: 0)
            }
            return nil
        }
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "bbb\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        p.expect(
            ["podman", "image", "inspect", "--format", "{{.Id}}", "docker.io/cerc/example:local"], exitCode: 1,
            stderr: "image not known")
        p.expect(["podman", "tag", "cerc/example:local", "docker.io/cerc/example:local"])
        p.expect(["podman", "untag", "cerc/example:local", "docker.io/cerc/example:local"])
        _ = try await StartAction(ctx).run(start)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let saved = try #require(archive.saved)
        #expect(archive.loaded == saved && saved.hasPrefix(c.h.tmp.file("tmp") + "/"), "\(saved)")
        #expect(
            !FileManager.default.fileExists(atPath: saved)
                && !FileManager.default.fileExists(atPath: Path.dirname(saved)))
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "load", "docker-image"]) })
    }

    /// The tag added for a podman load that cannot be removed again is named in a warning (it used to stay
    /// on the user's image without a word); the load itself went through.
    @Test func aTagThatCannotBeRemovedAfterAPodmanLoadWarns() async throws {
        let c = try await Self.harness(environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman"])
        var ctx = c.ctx
        ctx.environment["TMPDIR"] = c.h.tmp.file("tmp")
        let p = c.h.processes
        p.fallback = { args in
            if args.count == 5, args.starts(with: ["podman", "save", "-o"]) {
                try "image".write(toFile: args[3], atomically: true, encoding: .utf8)
                return ProcessResult(exitCode: 0)
            }
            return args.starts(with: ["kind", "load", "image-archive"]) ? ProcessResult(exitCode: 0) : nil
        }
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["podman", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"], stdout: "bbb\n")
        p.expect(
            [
                "podman", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}",
                "cerc/example:local",
            ], stdout: "sha256:aaa\n")
        p.expect(
            ["podman", "image", "inspect", "--format", "{{.Id}}", "docker.io/cerc/example:local"], exitCode: 1,
            stderr: "image not known")
        p.expect(["podman", "tag", "cerc/example:local", "docker.io/cerc/example:local"])
        p.expect(
            ["podman", "untag", "cerc/example:local", "docker.io/cerc/example:local"], exitCode: 125,
            stderr: "Error: busy")
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let warning = ctx.diagnostics.all.first {
            $0.message.hasPrefix("cannot remove the tag docker.io/cerc/example:local")
        }
        #expect(
            warning?.message
                == "cannot remove the tag docker.io/cerc/example:local that loading image cerc/example:local added",
            "\(ctx.diagnostics.all)")
        #expect(warning?.hint == "remove it with 'podman untag cerc/example:local docker.io/cerc/example:local'")
    }

    /// A pod an earlier start left waiting on the image (not yet built then) is made again once the image is
    /// loaded, rather than waiting out kubelet's back-off; a pod waiting on another image is left alone.
    @Test func podsWaitingOnALoadedImageAreMadeAgain() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        func pod(_ name: String, image: String) -> KubeObject {
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: name, namespace: c.id,
                labels: [("app.kubernetes.io/instance", c.id)],
                body: [
                    (
                        "status",
                        .map([
                            (
                                "containerStatuses",
                                .list([
                                    .map([
                                        ("name", .string("web")), ("image", .string(image)),
                                        ("state", .map([("waiting", .map([("reason", .string("ImagePullBackOff"))]))])),
                                    ])
                                ])
                            )
                        ])
                    )
                ])
        }
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id))
        try c.cluster.seed(pod("stuck", image: "docker.io/cerc/example:local"))
        try c.cluster.seed(pod("other", image: "acme/missing:1"))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"], stdout: "sha256:aaa\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "cerc/example:local",
            ],
            exitCode: 1, stderr: "no such image")
        p.expect(["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"])
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), wait: false, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(c.cluster.object("Pod", "stuck", namespace: c.id) == nil)
        #expect(c.cluster.object("Pod", "other", namespace: c.id) != nil)
        #expect(
            c.h.console.stdout.contains("restarting 1 pod waiting on a newly loaded image: stuck"),
            "\(c.h.console.stdout)")
    }

    /// A load that fails is reported, also when every object is already as rendered.
    @Test func aFailedLoadIsReportedOnAStartThatChangesNothing() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        // The node lost the image (pruned): the objects are as rendered, the load runs, and fails.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, exitCode: 1, stderr: "no such image")
        p.expect(
            ["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"], exitCode: 1,
            stderr: "ERROR: failed to load image")
        let again = StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain)
        await #expect { _ = try await StartAction(c.ctx).run(again) } throws: { e in
            ((e as? SoError)?.message ?? "").contains("cannot load image cerc/example:local into kind cluster shared")
        }
        #expect(p.pending.isEmpty)
    }
}

/// A flag set from a fake's callback (which runs on the caller's task, one at a time).
private final class Flag: @unchecked Sendable { var value = false }

/// The host's kind cluster is every kind deployment's: `stop --perform-cluster-management` deletes it only when
/// no other `so` deployment runs on it.
@Suite struct SharedKindClusterStopTests {
    @Test func theClusterIsKeptWhileAnotherDeploymentRunsOnIt() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        let other = KubeObject(
            apiVersion: "v1", kind: "Namespace", name: "laconic-other",
            labels: [("app.kubernetes.io/managed-by", "so")],
            annotations: [(DeploymentNames.directoryAnnotation, "/elsewhere/other")])
        try c.cluster.seed(other)
        let p = c.h.processes
        p.missing = []
        let stop = StopRequest(
            directory: "dep", cluster: ClusterOptions(performClusterManagement: true), deleteNamespace: true,
            timeout: 10, volumeGuard: nil)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        try await StopAction(c.ctx).run(stop)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "no kind delete: \(p.unexpected) \(p.pending)")
        let kept = c.ctx.diagnostics.all.map(\.message)
        #expect(
            kept.contains("kind cluster shared kept: 1 other deployment runs on it: other (laconic-other)"), "\(kept)")
        // The other one gone: the cluster goes too.
        _ = try await c.cluster.delete(.namespace, name: "laconic-other", namespace: nil, propagation: .background)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["kind", "delete", "cluster", "--name", "shared"])
        try await StopAction(c.ctx).run(stop)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
    }
}
