import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import SoWorkspace
import Testing

/// One golden scenario: a stack, how its spec is made, and the deployment directory name shown in output.
struct Scenario: CustomStringConvertible, Sendable {
    var name: String
    var stack: String
    var config: [String] = []
    var deployTo = "k8s-kind"
    var kubeConfig = false
    var imageRegistry: String?
    /// Edits applied to the spec text `deploy init` wrote.
    var edit: @Sendable (String) -> String = { $0 }
    /// Optional pods (`deploy init --with`).
    var with: [String]? = nil
    /// What the resolver answers for egress host names.
    var addresses: [String: [String]] = [:]
    /// Compose profiles (`deploy init --profile`).
    var profiles: [String] = []
    var description: String { name }

    static let laconic = RepoPaths.laconicStacks
    static let local = Path.join(Path.dirname(#filePath), "Stacks")
    static let fixtures = RepoPaths.laconicFixtures
    static let composeFixtures = RepoPaths.composeFixtures

    /// Scenarios over this repository's stacks and fixtures: they run in a fresh clone.
    static let own: [Scenario] =
        [
            Scenario(name: "example", stack: "example"),
            Scenario(
                name: "example-k8s", stack: "example", deployTo: "k8s", kubeConfig: true,
                imageRegistry: "registry.example.org/so",
                edit: {
                    $0.replacingOccurrences(
                        of: "secrets: {}",
                        with: """
                            secrets: {}
                            network:
                              http-proxy:
                                - host-name: example.org
                                  routes:
                                    - path: /
                                      proxy-to: web:80
                            """
                    ).replacingOccurrences(of: "network:\n  ports:\n    web:\n      - '80'\n", with: "")
                }),
            Scenario(
                name: "env-cases", stack: Path.join(local, "stacks/env-cases"),
                config: ["GREETING=hi", "API_PORT=9443"],
                edit: {
                    $0.replacingOccurrences(
                        of: "config:\n",
                        with: "config:\n  SESSION_KEY: $generate:alnum:32$\n  DB_PASSWORD: $generate:base64:24$\n")
                        + "namespace: env-cases\nreplicas: 2\nresources:\n  containers:\n    db:\n      reservations: {cpus: '1', memory: 1G}\n      limits: {cpus: '2', memory: 2G}\n"
                        + "annotations:\n  container.apparmor.security.beta.kubernetes.io/{name}: runtime/default\nlabels:\n  team: platform\n"
                        + "node-affinities:\n  - {label: nodetype, value: c}\nnode-tolerations:\n  - {key: nodeavoid, value: c}\n"
                }),
            Scenario(
                name: "agent-workspace", stack: "agent-workspace",
                config: ["GIT_REPO=https://gitlab.example.org/acme/web.git", "GIT_REF=release-2"],
                // aider: the agent's keys and both of its API hosts join the spec's (agents: in stack.yml).
                edit: { spec in
                    precondition(
                        spec.contains("  - api.github.com\n") && spec.contains("agent: claude"),
                        "the agent-workspace spec changed: fix this scenario's edit")
                    return spec.replacingOccurrences(
                        of: "  - api.github.com\n", with: "  - api.github.com\n  - 10.20.0.0/16\n"
                    ).replacingOccurrences(of: "agent: claude", with: "agent: aider")
                },
                with: ["postgres", "redis"],
                addresses: [
                    "gitlab.example.org": ["203.0.113.7"], "github.com": ["140.82.112.3"],
                    "api.github.com": ["140.82.112.6"],
                    "api.anthropic.com": ["160.79.104.10", "2607:6bc0::10"],
                    "api.openai.com": ["162.159.140.245", "172.66.0.243"],
                ]),
            Scenario(
                name: "hosts-binds", stack: Path.join(local, "stacks/hosts-binds"),
                edit: { $0 + "host-gateway: 172.18.0.1\n" }),
            Scenario(name: "compose-kitchen-sink", stack: Path.join(local, "compose/kitchen-sink/compose.yaml")),
            // The spec's network.ports replace admin's 8080:80: a hostPort kind maps on 127.0.0.1, and a NodePort.
            Scenario(
                name: "compose-ports", stack: Path.join(local, "compose/ports/compose.yaml"),
                edit: {
                    $0.replacingOccurrences(
                        of: "    admin:\n      - 8080:80\n",
                        with: "    admin:\n      - 127.0.0.1:8081:80\n      - 30080:80\n")
                }),
        ] + ownFixtures

    /// Tests/Fixtures: stacks in laconic's layout and plain compose projects of the same shapes as the shared corpus.
    static let ownFixtures: [Scenario] = [
        Scenario(
            name: "fixture-relay", stack: Path.join(fixtures, "stacks/relay"), config: ["RELAY_MODE=cluster"],
            edit: {
                $0.replacingOccurrences(of: "  relay-queue:\n", with: "  relay-queue: ./data/relay-queue\n")
                    .replacingOccurrences(
                        of: "secrets: {}",
                        with: """
                            secrets:
                              relay-secret: [RELAY_TOKEN]
                            network:
                              http-proxy:
                                - host-name: relay.localhost
                                  routes:
                                    - path: /
                                      proxy-to: relay:8080
                            """
                    )
                    .replacingOccurrences(of: "config:\n", with: "config:\n  RELAY_SESSION: $generate:hex:16$\n")
                    .replacingOccurrences(of: "network:\n  ports:\n    relay:\n      - '8080'\n", with: "")
            }),
        Scenario(
            name: "fixture-archive", stack: Path.join(fixtures, "stacks/archive"),
            edit: {
                $0.replacingOccurrences(
                    of: "  archive-data:\n", with: "  archive-data: /srv/kind/archive/archive-data\n")
                    + "kind-mount-root: /srv/kind\nresources:\n  volumes:\n    reservations:\n      storage: 20Gi\n"
            }),
        Scenario(name: "fixture-observe", stack: Path.join(fixtures, "stacks/observe")),
        Scenario(
            name: "fixture-gateway", stack: Path.join(fixtures, "stacks/gateway"), config: ["GATEWAY_LOG_LEVEL=info"]),
        Scenario(name: "fixture-compose-counter", stack: Path.join(composeFixtures, "counter")),
        Scenario(name: "fixture-compose-bookstore", stack: Path.join(composeFixtures, "bookstore")),
        Scenario(
            name: "fixture-compose-dns-pair", stack: Path.join(composeFixtures, "dns-pair"), config: ["TIMEZONE=UTC"]),
        Scenario(name: "fixture-compose-layered", stack: Path.join(composeFixtures, "layered/compose.yaml")),
        Scenario(
            name: "fixture-compose-layered-prod",
            stack: Path.join(composeFixtures, "layered/compose.yaml") + ","
                + Path.join(composeFixtures, "layered/compose.prod.yaml"),
            profiles: ["debug"]),
        // Variables in paths (env_file, bind sources, config and secret files, build contexts) and values.
        Scenario(name: "fixture-devnet", stack: Path.join(fixtures, "stacks/devnet"), config: ["NETWORK=testnet"]),
        Scenario(name: "fixture-compose-interpolated", stack: Path.join(composeFixtures, "interpolated")),
        // Compose's version-1 layout: links with an alias, volumes_from, net, dockerfile beside build.
        Scenario(name: "fixture-compose-legacy-v1", stack: Path.join(composeFixtures, "legacy-v1")),
    ]

    /// Scenarios over ../shared/fixtures (laconic's own stacks; plain compose files as people write them, used
    /// as stacks as they are): run when the shared corpus is beside the checkout, reported skipped otherwise.
    static let shared: [Scenario] =
        [
            Scenario(
                name: "laconic-test", stack: Path.join(laconic, "stacks/test"), config: ["CERC_TEST_PARAM_1=PASSED"],
                edit: {
                    $0.replacingOccurrences(
                        of: "  test-data-bind:\n", with: "  test-data-bind: ./data/test-data-bind\n"
                    )
                    .replacingOccurrences(
                        of: "secrets: {}",
                        with: """
                            secrets:
                              test-secret: [TEST_SECRET_KEY]
                            network:
                              http-proxy:
                                - host-name: test.localhost
                                  routes:
                                    - path: /
                                      proxy-to: test:80
                            """
                    )
                    .replacingOccurrences(of: "config:\n", with: "config:\n  SESSION: $generate:hex:16$\n")
                    .replacingOccurrences(of: "network:\n  ports:\n    test:\n      - '80'\n", with: "")
                }),
            Scenario(
                name: "laconic-test-database", stack: Path.join(laconic, "stacks/test-database"),
                edit: {
                    $0.replacingOccurrences(of: "  db-data:\n", with: "  db-data: /srv/kind/test-database/db-data\n")
                        + "kind-mount-root: /srv/kind\nresources:\n  volumes:\n    reservations:\n      storage: 10Gi\n"
                }),
            Scenario(name: "laconic-monitoring", stack: Path.join(laconic, "stacks/monitoring")),
            Scenario(name: "laconic-kubo", stack: Path.join(laconic, "stacks/kubo")),
            Scenario(
                name: "laconic-container-registry", stack: Path.join(laconic, "stacks/container-registry"),
                config: ["REGISTRY_LOG_LEVEL=info"]),
        ]
        + [
            "flask-redis", "gitea-postgres", "nginx-flask-mysql", "pihole-cloudflared-DoH", "prometheus-grafana",
            "wordpress-mysql",
        ].map {
            Scenario(
                name: "compose-\($0.lowercased())", stack: Path.join(RepoPaths.shared, "fixtures/compose-real", $0))
        }
}

enum Golden {
    static let directory = Path.join(Path.dirname(#filePath), "Golden")

    /// init + create in a temp dir with a fixed clock and seeded entropy; `body` reads the deployment.
    static func withDeployment<T>(_ s: Scenario, _ body: (SoContext, String) throws -> T) async throws -> T {
        let tmp = try TempDir("so-golden")
        defer { tmp.cleanup() }
        let processes = FakeProcessRunner()
        processes.missing = ["kind"]
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: tmp.path), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(seed: 11),
            console: CapturedConsole(), environment: [:], builtInRoot: RepoPaths.root)
        if s.kubeConfig { try tmp.write("kubeconfig", "apiVersion: v1\nkind: Config\n") }
        var initReq = InitRequest(
            stack: s.stack, deployTo: s.deployTo, config: s.config, kubeConfig: s.kubeConfig ? "kubeconfig" : nil,
            imageRegistry: s.imageRegistry, output: "spec.yml")
        initReq.with = s.with
        initReq.profiles = s.profiles
        try await InitAction(ctx).run(initReq)
        try tmp.write("spec.yml", s.edit(try tmp.read("spec.yml")))
        try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        return try body(ctx, tmp.file("dep"))
    }

    static func render(_ s: Scenario) async throws -> (Manifest, [Diagnostic]) {
        try await withDeployment(s) { ctx, dir in
            let model = try DeploymentLoader.load(
                dir, fs: LocalFileSystem(), diagnostics: ctx.diagnostics, displayDirectory: "/deployments/\(s.name)")
            return (
                try Renderer.render(model, options: RenderOptions(egressAddresses: s.addresses)), ctx.diagnostics.all
            )
        }
    }

    static func path(_ s: Scenario) -> String { Path.join(directory, "\(s.name).yaml") }

    /// init + create, then the mapping report.
    static func report(_ s: Scenario) async throws -> String {
        try await withDeployment(s) { ctx, _ in
            var ctx = ctx
            ctx.resolver = StaticResolver(s.addresses)
            return MappingReport.text(try RenderAction(ctx).report("dep"))
        }
    }
}

@Suite struct GoldenTests {
    /// Rendered manifests match the checked-in goldens byte for byte (`SO_UPDATE_GOLDEN=1` rewrites them).
    @Test(arguments: Scenario.own)
    func matchesGolden(_ s: Scenario) async throws { try await Self.checkGolden(s) }

    /// The same over the shared corpus.
    @Test(.enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)"), arguments: Scenario.shared)
    func sharedMatchesGolden(_ s: Scenario) async throws { try await Self.checkGolden(s) }

    static func checkGolden(_ s: Scenario) async throws {
        let (manifest, _) = try await Golden.render(s)
        // The manifest is in stage order: what start applies in that order (Stage.of(kind:)) is what render filed.
        let stages = manifest.objects.map { Stage.of(kind: $0.kind) }
        #expect(stages == stages.sorted(), "\(s.name): \(manifest.objects.map(\.reference))")
        var text = manifest.yaml()
        if !manifest.warnings.isEmpty {
            text =
                manifest.warnings.map {
                    "# \($0.description.replacingOccurrences(of: RepoPaths.root, with: "<repo>").replacingOccurrences(of: RepoPaths.shared, with: "<shared>"))"
                }
                .joined(separator: "\n") + "\n" + text
        }
        text = text.replacingOccurrences(
            of: #"/[^ :]*/\.so-golden\.[A-Za-z0-9.]+"#, with: "<tmp>", options: .regularExpression)
        let path = Golden.path(s)
        if ProcessInfo.processInfo.environment["SO_UPDATE_GOLDEN"] == "1" {
            try LocalFileSystem().writeText(text, to: path)
            return
        }
        let golden = try LocalFileSystem().readText(path)
        #expect(text == golden, "\(s.name): run with SO_UPDATE_GOLDEN=1 and read the diff")
    }

    /// The mapping report of every scenario matches its golden (`<name>.report.txt`).
    @Test(arguments: Scenario.own)
    func reportMatchesGolden(_ s: Scenario) async throws { try await Self.checkReport(s) }

    @Test(.enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)"), arguments: Scenario.shared)
    func sharedReportMatchesGolden(_ s: Scenario) async throws { try await Self.checkReport(s) }

    static func checkReport(_ s: Scenario) async throws {
        let text = try await Golden.report(s)
        let path = Path.join(Golden.directory, "\(s.name).report.txt")
        if ProcessInfo.processInfo.environment["SO_UPDATE_GOLDEN"] == "1" {
            try LocalFileSystem().writeText(text, to: path)
            return
        }
        #expect(
            text == (try LocalFileSystem().readText(path)), "\(s.name): run with SO_UPDATE_GOLDEN=1 and read the diff")
        #expect(!text.isEmpty)
    }

    @Test(arguments: Scenario.own)
    func renderIsDeterministic(_ s: Scenario) async throws { try await Self.checkDeterministic(s) }

    @Test(.enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)"), arguments: Scenario.shared)
    func sharedRenderIsDeterministic(_ s: Scenario) async throws { try await Self.checkDeterministic(s) }

    static func checkDeterministic(_ s: Scenario) async throws {
        let a = try await Golden.render(s).0.yaml()
        let b = try await Golden.render(s).0.yaml()
        #expect(a == b)
    }

    /// Every golden file belongs to a scenario (a renamed scenario leaves no stale golden behind).
    @Test func everyGoldenHasAScenario() throws {
        let names = Set((Scenario.own + Scenario.shared).map(\.name))
        let files = try LocalFileSystem().list(Golden.directory)
        #expect(!files.isEmpty)
        for f in files {
            let name =
                f.hasSuffix(".report.txt") ? String(f.dropLast(".report.txt".count)) : String(f.dropLast(".yaml".count))
            #expect(names.contains(name), "\(f) has no scenario")
        }
    }
}

/// Every golden manifest validates against the Kubernetes OpenAPI schemas (kubernetes-validate --strict).
/// CI installs the validator; elsewhere the test is skipped (and says so) when it is missing.
@Suite struct SchemaTests {
    static let validator = LocalProcessRunner.which(
        "kubernetes-validate", path: ProcessInfo.processInfo.environment["PATH"] ?? "")
    static let required = ProcessInfo.processInfo.environment["CI"] != nil

    @Test(
        .enabled(
            if: validator != nil || required, "kubernetes-validate is not installed (pip install kubernetes-validate)"),
        arguments: Scenario.own)
    func goldenIsSchemaValid(_ s: Scenario) async throws {
        let (manifest, _) = try await Golden.render(s)
        try await Self.validate(manifest.objects, name: s.name)
    }

    @Test(
        .enabled(
            if: validator != nil || required, "kubernetes-validate is not installed (pip install kubernetes-validate)"),
        .enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)"), arguments: Scenario.shared)
    func sharedGoldenIsSchemaValid(_ s: Scenario) async throws {
        let (manifest, _) = try await Golden.render(s)
        try await Self.validate(manifest.objects, name: s.name)
    }

    @Test(
        .enabled(
            if: validator != nil || required, "kubernetes-validate is not installed (pip install kubernetes-validate)"))
    func ingressControllerIsSchemaValid() async throws {
        try await Self.validate(
            IngressController.objects(image: nil, acmeEmail: "ops@example.org"), name: "ingress controller")
    }

    static func validate(_ objects: [KubeObject], name: String) async throws {
        let validator = try #require(Self.validator, "kubernetes-validate must be installed in CI")
        let tmp = try TempDir("so-schema")
        defer { tmp.cleanup() }
        var files: [String] = []
        for (i, o) in objects.enumerated() {
            let f = tmp.file("\(i)-\(o.kind)-\(o.name).yaml")
            try LocalFileSystem().writeText(o.yaml(), to: f)
            files.append(f)
        }
        // The oldest Kubernetes `so` supports and the newest the validator knows.
        for version in [["-k", "1.30.0"], []] {
            let r = try await LocalProcessRunner().run(
                [validator, "--strict", "--quiet", "--no-warn"] + version + files, workingDirectory: nil,
                environment: nil, timeout: 120)
            #expect(r.exitCode == 0, "\(name) \(version):\n\(r.stdout)\n\(r.stderr)")
        }
        #expect(!files.isEmpty)
    }
}
