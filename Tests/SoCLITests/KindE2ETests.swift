import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// What the kind suite runs with. Where the host cannot pull (this machine: kind, Docker and a node image
/// built offline, `.ci/run`'s kind tier), the example stack's public images become the host's
/// `cerc/test-container:local` (busybox httpd on port 80), which `so` loads into kind as any `:local` image,
/// and the ingress controller is a stand-in built here with `docker build` (busybox answering the controller's
/// readiness probe and HTTP on port 80), which `so` loads because the spec names it (`caddy-ingress-image`).
/// With the stand-in, a request to port 80 proves the path host → kind node → controller pod, not Caddy's routing.
enum KindE2E {
    static let enabled = ProcessInfo.processInfo.environment["SO_E2E_KIND"] == "1"
    static let nodeImage = ProcessInfo.processInfo.environment["SO_E2E_KIND_NODE_IMAGE"] ?? "kindest/node:v1.36.2"
    static let ingressImage = "so-e2e/ingress:local"
    static let localImage = "docker.io/cerc/test-container:local"

    static func run(_ args: [String], cwd: String? = nil) async throws -> ProcessResult {
        try await LocalProcessRunner().run(args, workingDirectory: cwd, environment: nil, timeout: 600)
    }

    /// True when this host's Docker lacks the default Caddy controller image (it cannot pull it either).
    static func offline() async throws -> Bool {
        try await run(["docker", "image", "inspect", "ghcr.io/laconicnetwork/caddy-ingress:latest"]).exitCode != 0
    }

    static func clusters() async throws -> [String] {
        try await run(["kind", "get", "clusters"]).stdout.split(separator: "\n").map(String.init)
    }

    /// `stop` of the deployment in `dir` with its volumes, namespace and the cluster: no kind cluster is left.
    static func stopRemovingCluster(_ dir: String, in t: TempDir) async throws {
        let r = try await E2E.so(
            [
                "deployment", "--dir", dir, "stop", "--delete-volumes", "--delete-namespace",
                "--perform-cluster-management",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(try await clusters().isEmpty)
    }

    /// A spec for the example stack, with an ingress for `host` and, offline, the stand-in controller.
    static func spec(_ file: String, host: String, in t: TempDir, extra: [String] = []) async throws {
        let r = try await E2E.so(["--stack", "example", "deploy", "init", "--output", file] + extra, cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy init: \(r.stderr)") }
        let proxy =
            "network:\n  http-proxy:\n    - host-name: \(host)\n      routes:\n        - path: /\n          proxy-to: web:80\n"
        let ingress = try await offline() ? "caddy-ingress-image: \(ingressImage)\n" : ""
        try t.write(file, try t.read(file).replacingOccurrences(of: "network:\n", with: proxy) + ingress)
    }

    /// Offline: the deployment's public images become the host's local one, and the stand-in controller is built.
    static func localize(_ t: TempDir, deployment dep: String) async throws {
        guard try await offline() else { return }
        for file in [
            "\(dep)/compose/docker-compose-example.yml", "\(dep)/compose-jobs/docker-compose-example-migrate.yml",
        ] {
            try t.write(
                file,
                try t.read(file).replacingOccurrences(of: "image: nginx:1.27-alpine", with: "image: \(localImage)")
                    .replacingOccurrences(of: "image: busybox:1.36", with: "image: \(localImage)"))
        }
        try IngressStandIn.writeContext(in: t)
        let r = try await run([
            "docker", "build", "--tag", ingressImage, "-f", t.file("ingress/Containerfile"), t.file("ingress"),
        ])
        guard r.exitCode == 0 else { throw SoError("docker build \(ingressImage): \(r.stderr)") }
    }
    /// A stack `kw` in `t/kw` whose one service keeps files in the path volume `keep`, from the host's `:local` image.
    static func keeperStack(in t: TempDir) throws {
        try t.write("kw/stacks/kw/stack.yml", "name: kw\npods: [kw]\n")
        try t.write(
            "kw/compose/docker-compose-kw.yml",
            """
            services:
              keeper:
                image: \(localImage)
                command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
                volumes:
                  - keep:/keep
            volumes:
              keep:

            """)
    }

    /// A deployment `dir` of `kw` with `kind-workers: workers` and `keep` at `./keep-data`; its deployment ID.
    static func keeperDeployment(_ dir: String, workers: Int, in t: TempDir) async throws -> String {
        var r = try await E2E.so(
            [
                "--stack", t.file("kw/stacks/kw"), "deploy", "init", "--output", "\(dir).yml", "--kind-node-image",
                nodeImage,
            ],
            cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy init: \(r.stderr)") }
        let spec = try t.read("\(dir).yml").split(separator: "\n").filter {
            !$0.hasPrefix("volumes:") && !$0.hasPrefix("  keep")
        }
        try t.write(
            "\(dir).yml", spec.joined(separator: "\n") + "\nkind-workers: \(workers)\nvolumes:\n  keep: ./keep-data\n")
        r = try await E2E.so(["deploy", "create", "--spec-file", "\(dir).yml", "--deployment-dir", dir], cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy create: \(r.stderr)") }
        return try t.read("\(dir)/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }?
            .dropFirst(14).trimmedSpaces ?? ""
    }
}

/// The kind lifecycle with real kind and Docker. Opt-in with SO_E2E_KIND=1 (needs kind, docker, a node image
/// and free ports 80/443); every test starts and ends with no kind cluster on the host.
@Suite(
    .serialized,
    .enabled(
        if: KindE2E.enabled,
        "SO_E2E_KIND is not 1: no kind and Docker here (.ci/run runs this suite as its own step where they are)"))
struct KindE2ETests {
    /// Create the cluster from the spec's node image, install the ingress controller, serve through it on port 80,
    /// report a deployment whose spec wants another node image, delete the cluster.
    @Test func clusterLifecycle() async throws {
        #expect(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind")
        defer { t.cleanup() }
        try await KindE2E.spec("spec.yml", host: "localhost", in: t, extra: ["--kind-node-image", KindE2E.nodeImage])
        var r = try await E2E.so(
            ["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        try await KindE2E.localize(t, deployment: "dep")
        r = try await E2E.so(
            [
                "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress",
                "plain",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("node image \(KindE2E.nodeImage)"), "\(r.stdout)")
        let clusters = try await KindE2E.clusters()
        #expect(clusters.count == 1, "\(clusters)")
        let name = try #require(clusters.first)
        let image = try await KindE2E.run([
            "docker", "inspect", "--format", "{{.Config.Image}}", "\(name)-control-plane",
        ])
        #expect(image.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == KindE2E.nodeImage, "\(image.stdout)")
        let page = try await KindE2E.run([
            "curl", "-fsS", "--max-time", "20", "-H", "Host: localhost", "http://127.0.0.1/",
        ])
        #expect(page.exitCode == 0, "\(page.stderr)")
        if try await KindE2E.offline() { #expect(page.stdout.contains("ingress-stand-in"), "\(page.stdout)") }

        // A second deployment whose spec names another node image: kind cannot change a running node; reported.
        try await KindE2E.spec(
            "other.yml", host: "other.localhost", in: t, extra: ["--kind-node-image", "kindest/node:v1.99.0"])
        r = try await E2E.so(
            ["deploy", "create", "--spec-file", "other.yml", "--deployment-dir", "other"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(["deployment", "--dir", "other", "status"], cwd: t.path)
        #expect(
            r.stderr.contains(
                "runs node image \(KindE2E.nodeImage), not the spec's kind-node-image kindest/node:v1.99.0"),
            "\(r.stderr)")

        try await KindE2E.stopRemovingCluster("dep", in: t)
    }

    /// Issue 24: two deployments (each naming its own cluster) started at the same moment on a host with no
    /// cluster make one kind cluster and one ingress controller; both run on it.
    @Test func twoDeploymentsOnAFreshHostMakeOneClusterAndOneController() async throws {
        #expect(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind-race")
        defer { t.cleanup() }
        for dep in ["a", "b"] {
            try await KindE2E.spec(
                "\(dep).yml", host: "\(dep).localhost", in: t, extra: ["--kind-node-image", KindE2E.nodeImage])
            let r = try await E2E.so(
                ["deploy", "create", "--spec-file", "\(dep).yml", "--deployment-dir", dep], cwd: t.path)
            #expect(r.exitCode == 0, "\(r.stderr)")
            try await KindE2E.localize(t, deployment: dep)
        }
        let ids = try ["a", "b"].map { dep in
            try t.read("\(dep)/deployment.yml").split(separator: "\n").first { $0.hasPrefix("cluster-id:") }.map {
                $0.dropFirst(11).trimmedSpaces
            } ?? ""
        }
        #expect(ids[0] != ids[1], "each deployment names its own cluster: \(ids)")
        let start = ["start", "--perform-cluster-management", "--timeout", "600", "--progress", "plain"]
        async let a = E2E.so(["deployment", "--dir", "a"] + start, cwd: t.path)
        async let b = E2E.so(["deployment", "--dir", "b"] + start, cwd: t.path)
        let results = try await [a, b]
        for r in results { #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)") }
        let clusters = try await KindE2E.clusters()
        #expect(clusters.count == 1, "one cluster per host: \(clusters)")
        #expect(results.filter { $0.stdout.contains("creating kind cluster") }.count == 1, "\(results.map(\.stdout))")
        #expect(
            results.filter { $0.stdout.contains("installing the Caddy ingress controller") }.count == 1,
            "\(results.map(\.stdout))")
        if let name = clusters.first {
            let kubectl = ["kubectl", "--context", "kind-\(name)"]
            let ready = try await KindE2E.run(
                kubectl + [
                    "-n", "caddy-system", "get", "deployments", "-o", "jsonpath={.items[*].status.availableReplicas}",
                ])
            #expect(ready.stdout == "1", "one controller, ready: \(ready.stdout) \(ready.stderr)")
            let namespaces = try await KindE2E.run(kubectl + ["get", "namespaces", "-o", "name"]).stdout
            for dir in ["a", "b"] {
                let id =
                    try t.read("\(dir)/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }?
                    .dropFirst(14).trimmedSpaces ?? "?"
                #expect(namespaces.contains("namespace/\(id)"), "\(dir) runs on the one cluster: \(namespaces)")
            }
        }
        var r = try await E2E.so(
            ["deployment", "--dir", "a", "stop", "--delete-volumes", "--delete-namespace"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(
            [
                "deployment", "--dir", "b", "stop", "--delete-volumes", "--delete-namespace",
                "--perform-cluster-management",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(try await KindE2E.clusters().isEmpty)
    }

    /// A `:local` image rebuilt between two starts runs after the second: loaded into kind (its ID
    /// changed) and rolled (the ID is in the Deployment's pod template).
    @Test func aRebuiltLocalImageRuns() async throws {
        #expect(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind-image")
        defer { t.cleanup() }
        let base = try await KindE2E.offline() ? KindE2E.localImage : "nginx:1.27-alpine"
        func build(_ id: String) async throws {
            try t.write("image/Dockerfile", "FROM \(base)\nRUN echo \(id) > /build-id\n")
            let r = try await KindE2E.run(["docker", "build", "--tag", "so-e2e/rebuilt:local", t.file("image")])
            #expect(r.exitCode == 0, "\(r.stderr)")
        }
        var r = try await E2E.so(
            ["--stack", "example", "deploy", "init", "--output", "spec.yml", "--kind-node-image", KindE2E.nodeImage],
            cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        try await KindE2E.localize(t, deployment: "dep")
        let compose = try t.read("dep/compose/docker-compose-example.yml")
        try t.write(
            "dep/compose/docker-compose-example.yml",
            compose.replacingOccurrences(of: "image: nginx:1.27-alpine", with: "image: so-e2e/rebuilt:local")
                .replacingOccurrences(of: "image: \(KindE2E.localImage)", with: "image: so-e2e/rebuilt:local"))
        let start = [
            "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress",
            "plain",
        ]
        try await build("first")
        r = try await E2E.so(start, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(["deployment", "--dir", "dep", "exec", "web", "--", "cat", "/build-id"], cwd: t.path)
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "first", "\(r.stdout)\n\(r.stderr)")
        try await build("second")
        r = try await E2E.so(start, cwd: t.path)
        #expect(r.exitCode == 0 && r.stdout.contains("loading image"), "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(["deployment", "--dir", "dep", "exec", "web", "--", "cat", "/build-id"], cwd: t.path)
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "second", "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            [
                "deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace",
                "--perform-cluster-management",
            ], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        _ = try await KindE2E.run(["docker", "image", "rm", "so-e2e/rebuilt:local"])
    }

    /// `kind-workers: 1` on real kind: the cluster is made with a worker; the path volume's pod runs there and its
    /// PersistentVolume names it; a file written in the volume is on the worker's mount and in the host directory,
    /// and is there again after a stop and a start; the stack's `:local` image is on the worker. A deployment whose
    /// spec asks for no worker is told the running cluster has one (kind cannot change its nodes).
    // Right after kind creates the cluster its worker is NotReady for about 20 s (its network is coming up): start
    // waits for it (VolumeNodeCheck's `joining`) instead of calling the pinned pod's node not ready.
    @Test func aWorkerHoldsThePathVolume() async throws {
        #expect(try await KindE2E.clusters().isEmpty, "a kind cluster is already running on this host")
        let t = try TempDir("so-e2e-kind-workers")
        defer { t.cleanup() }
        try KindE2E.keeperStack(in: t)
        let id = try await KindE2E.keeperDeployment("dep", workers: 1, in: t)
        let start = [
            "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress",
            "plain",
        ]
        var r = try await E2E.so(start, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        let name = try #require(try await KindE2E.clusters().first)
        let worker = "\(name)-worker"
        let nodes = try await KindE2E.run(["kind", "get", "nodes", "--name", name]).stdout
        #expect(Set(nodes.split(separator: "\n").map(String.init)) == ["\(name)-control-plane", worker], "\(nodes)")
        let kubectl = ["kubectl", "--context", "kind-\(name)"]
        func keeperNode() async throws -> String {
            try await KindE2E.run(
                kubectl + [
                    "-n", NameRules.dnsLabel(id), "get", "pods", "-l", "app.kubernetes.io/component=kw", "-o",
                    "jsonpath={.items[?(@.status.phase==\"Running\")].spec.nodeName}",
                ]
            ).stdout
        }
        #expect(try await keeperNode() == worker)
        let pv = try await KindE2E.run(
            kubectl + [
                "get", "pv", "-l", "app=\(id)", "-o",
                "jsonpath={.items[0].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}",
            ])
        #expect(pv.stdout == worker, "the path volume's node: \(pv.stdout) \(pv.stderr)")
        // The image reached the worker (kind load, every node).
        let image = try await KindE2E.run(["docker", "exec", worker, "crictl", "inspecti", KindE2E.localImage])
        #expect(image.exitCode == 0, "\(image.stderr)")
        let exec = ["deployment", "--dir", "dep", "exec", "keeper", "--", "sh", "-c"]
        r = try await E2E.so(exec + ["echo kept-$$ > /keep/mark; cat /keep/mark"], cwd: t.path)
        let mark = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(mark.hasPrefix("kept-"), "\(r.stdout)\n\(r.stderr)")
        let onWorker = try await KindE2E.run(["docker", "exec", worker, "cat", "/mnt/keep/mark"]).stdout
        #expect(onWorker.trimmingCharacters(in: .whitespacesAndNewlines) == mark, "on the worker's mount: \(onWorker)")
        #expect((try? t.read("dep/keep-data/mark"))?.trimmingCharacters(in: .whitespacesAndNewlines) == mark)
        r = try await E2E.so(["deployment", "--dir", "dep", "stop", "--timeout", "60"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(start, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(try await keeperNode() == worker)
        r = try await E2E.so(exec + ["cat /keep/mark"], cwd: t.path)
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == mark, "\(r.stdout)\n\(r.stderr)")

        // Another deployment asking for no worker: the running cluster's nodes are reported with how to recreate.
        _ = try await KindE2E.keeperDeployment("other", workers: 0, in: t)
        r = try await E2E.so(["deployment", "--dir", "other", "status"], cwd: t.path)
        #expect(
            r.stderr.contains("kind cluster '\(name)' has 1 worker node, not the spec's kind-workers 0")
                && r.stderr.contains("kind delete cluster --name \(name)"),
            "\(r.stderr)")

        try await KindE2E.stopRemovingCluster("dep", in: t)
    }

    /// Issue 22: `KIND_EXPERIMENTAL_PROVIDER=podman` on a host where Docker does not answer: kind makes the
    /// cluster on podman, `so` reads the local image's ID with podman, loads it through an archive, and deletes
    /// the cluster. Runs when SO_E2E_KIND_PODMAN=1 (podman with the node image and the test image in its store).
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["SO_E2E_KIND_PODMAN"] == "1",
            "SO_E2E_KIND_PODMAN is not 1: no podman set up for kind"))
    func aPodmanHostWithoutDocker() async throws {
        let env = ["KIND_EXPERIMENTAL_PROVIDER": "podman", "DOCKER_HOST": "unix:///nonexistent/docker.sock"]
        let t = try TempDir("so-e2e-kind-podman")
        defer { t.cleanup() }
        var r = try await E2E.so(
            ["--stack", "example", "deploy", "init", "--output", "spec.yml", "--kind-node-image", KindE2E.nodeImage],
            cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(
            ["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        for file in ["dep/compose/docker-compose-example.yml", "dep/compose-jobs/docker-compose-example-migrate.yml"] {
            try t.write(
                file,
                try t.read(file).replacingOccurrences(
                    of: "image: nginx:1.27-alpine", with: "image: \(KindE2E.localImage)"
                )
                .replacingOccurrences(of: "image: busybox:1.36", with: "image: \(KindE2E.localImage)"))
        }
        r = try await E2E.so(
            [
                "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress",
                "plain",
            ], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(
            r.stdout.contains("provider podman") && r.stdout.contains("loading image \(KindE2E.localImage)"),
            "\(r.stdout)")
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "exec", "web", "--", "cat", "/tmp/www/index.html"], cwd: t.path, env: env)
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "\(r.stdout)\n\(r.stderr)")
        // Started again: the node's copy is the host's (podman's bare ID against crictl's sha256:), nothing loaded.
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--perform-cluster-management", "--progress", "plain"], cwd: t.path,
            env: env)
        #expect(
            r.exitCode == 0 && !r.stdout.contains("loading image") && r.stdout.contains("unchanged"),
            "\(r.stdout)\n\(r.stderr)")

        // A stack whose image is built here: started before the build (the pod cannot pull it), built with podman
        // by build-containers, started again: loaded under the name the node resolves, the waiting pod made again.
        // Its build.sh calls `docker build` by name, as laconic-so's do (Docker does not answer here).
        let image = "so-e2e/podbuild:local"
        try t.write("pb/stacks/pb/stack.yml", "name: pb\ncontainers: [so-e2e/podbuild]\npods: [pb]\n")
        try t.write(
            "pb/container-build/so-e2e-podbuild/Dockerfile", "FROM \(KindE2E.localImage)\nRUN echo built > /built\n")
        try t.write(
            "pb/container-build/so-e2e-podbuild/build.sh",
            """
            #!/usr/bin/env bash
            set -e
            SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd )
            docker build -t so-e2e/podbuild:local ${build_command_args} ${SCRIPT_DIR}

            """)
        try t.write("pb/compose/docker-compose-pb.yml", "services:\n  pb:\n    image: \(image)\n")
        _ = try await KindE2E.run(["podman", "rmi", "--force", image])
        r = try await E2E.so(
            ["--stack", t.file("pb/stacks/pb"), "deploy", "init", "--output", "pb.yml"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(
            ["deploy", "create", "--spec-file", "pb.yml", "--deployment-dir", "pbdep"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "pbdep", "start", "--timeout", "120", "--progress", "plain"], cwd: t.path, env: env)
        #expect(r.exitCode != 0 && r.stderr.contains("cannot pull image \(image)"), "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(["--stack", t.file("pb/stacks/pb"), "build-containers"], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "pbdep", "start", "--timeout", "120", "--progress", "plain"], cwd: t.path, env: env)
        #expect(
            r.exitCode == 0 && r.stdout.contains("restarting 1 pod waiting on a newly loaded image"),
            "\(r.stdout)\n\(r.stderr)")
        r = try await E2E.so(
            ["deployment", "--dir", "pbdep", "exec", "pb", "--", "cat", "/built"], cwd: t.path, env: env)
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "built", "\(r.stdout)\n\(r.stderr)")
        let names = try await KindE2E.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"]).stdout
        #expect(!names.contains("docker.io/so-e2e/podbuild"), "the save's tag is removed: \(names)")
        // The cluster is kept while pbdep runs on it, and goes with the last one.
        r = try await E2E.so(
            [
                "deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace",
                "--perform-cluster-management",
            ], cwd: t.path, env: env)
        #expect(r.exitCode == 0 && r.stderr.contains("kept: 1 other deployment runs on it"), "\(r.stderr)")
        _ = try await KindE2E.run(["podman", "rmi", "--force", image])
        r = try await E2E.so(
            [
                "deployment", "--dir", "pbdep", "stop", "--delete-volumes", "--delete-namespace",
                "--perform-cluster-management",
            ], cwd: t.path, env: env)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let left = try await LocalProcessRunner().run(
            ["kind", "get", "clusters"], workingDirectory: nil,
            environment: ProcessInfo.processInfo.environment.merging(env) { $1 },
            timeout: 60)
        #expect(left.stdout.isEmpty, "\(left.stdout)")
    }
}
