import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// `kind-node-image:` (`deploy init --kind-node-image`) and `KIND_EXPERIMENTAL_PROVIDER`: the image kind
/// creates the node from, a running node made from another image reported, the provider given to kind and
/// used for what `so` asks the node container.
@Suite struct KindNodeImageTests {
    static let image = "kindest/node:v1.31.0"

    /// deploy init → deploy create of a kind deployment with the node image; `h.ctx`'s environment as given.
    static func deployment(environment: [String: String] = [:]) async throws -> (Harness, String) {
        let h = try Harness(environment: environment)
        var req = InitRequest(stack: "example", output: "spec.yml", force: true)
        req.kindNodeImage = image
        try await InitAction(h.ctx).run(req)
        _ = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        let clusterID = try DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink())
            .clusterID
        return (h, clusterID)
    }

    @Test func initWritesTheKeyAndCreateWritesItIntoKindConfig() async throws {
        let (h, _) = try await Self.deployment()
        defer { h.tmp.cleanup() }
        #expect(try h.read("spec.yml").contains("\nkind-node-image: \(Self.image)\n"))
        let kindConfig = try h.read("dep/kind-config.yml")
        #expect(kindConfig.contains("  - role: control-plane\n    image: \(Self.image)\n"), "\(kindConfig)")
        #expect(h.ctx.diagnostics.all.isEmpty, "\(h.ctx.diagnostics.all)")
    }

    @Test func initRefusesTheOptionForK8sAndABadImage() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("kc", "apiVersion: v1\nkind: Config\n")
        var req = InitRequest(
            stack: "example", deployTo: "k8s", kubeConfig: "kc", imageRegistry: "reg.example/x", output: "spec.yml")
        req.kindNodeImage = Self.image
        do {
            try await InitAction(h.ctx).run(req)
            Issue.record("k8s with --kind-node-image was accepted")
        } catch let e as SoError {
            #expect(e.line.contains("--kind-node-image is only for --deploy-to k8s-kind"), "\(e.line)")
            #expect(e.exitCode == 64)
        }
        var bad = InitRequest(stack: "example", output: "spec.yml")
        bad.kindNodeImage = "kindest/node v1"
        do {
            try await InitAction(h.ctx).run(bad)
            Issue.record("a bad image was accepted")
        } catch let e as SoError {
            #expect(e.line.contains("--kind-node-image 'kindest/node v1' is not an image reference"), "\(e.line)")
        }
        #expect(!h.fs.exists(h.path("spec.yml")))
    }

    /// start creates the cluster from kind-config.yml (which names the image) and hands kind the environment
    /// with KIND_EXPERIMENTAL_PROVIDER; the message names both.
    @Test func startCreatesTheClusterWithTheImageAndTheProvider() async throws {
        let (h, clusterID) = try await Self.deployment(environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman"])
        defer { h.tmp.cleanup() }
        let cluster = FakeCluster()
        var ctx = h.ctx
        ctx.connect = { _ in cluster }
        let p = h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")
        p.expect(["kind", "get", "clusters"], stdout: "No kind clusters found.\n")  // again, under the host's lock
        p.expect(["kind", "create", "cluster", "--name", clusterID, "--config", h.path("dep/kind-config.yml")])
        let kubeconfig = ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)")
        p.expect(["kind", "get", "kubeconfig", "--name", clusterID], stdout: kubeconfig)
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), wait: false, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        let kindCalls = zip(p.calls, p.environments).filter { $0.0.arguments.first == "kind" }
        // deploy create's look for a running cluster (kind missing then), and start's list, list under the lock,
        // create and kubeconfig.
        #expect(
            kindCalls.map { $0.0.arguments[1] } == ["get", "get", "get", "create", "get"],
            "\(kindCalls.map(\.0.arguments))")
        for (call, env) in kindCalls { #expect(env?["KIND_EXPERIMENTAL_PROVIDER"] == "podman", "\(call.arguments)") }
        #expect(
            h.console.stdout.contains(
                "creating kind cluster '\(clusterID)' (node image \(Self.image), provider podman)"),
            "\(h.console.stdout)")
    }

    /// A running node made from another image is reported (kind cannot change it), through the provider's CLI;
    /// the same image with kind's pinned digest is not.
    @Test func aRunningNodeOfAnotherImageIsReported() async throws {
        let (h, clusterID) = try await Self.deployment(environment: ["KIND_EXPERIMENTAL_PROVIDER": "nerdctl"])
        defer { h.tmp.cleanup() }
        let cluster = FakeCluster()
        var ctx = h.ctx
        ctx.connect = { _ in cluster }
        let p = h.processes
        p.missing = []
        let inspect = ["nerdctl", "inspect", "--format", "{{.Config.Image}}", "\(clusterID)-control-plane"]
        for running in ["kindest/node:v1.29.2@sha256:51a1", "docker.io/kindest/node:v1.31.0@sha256:53df"] {
            p.expect(["kind", "get", "clusters"], stdout: "\(clusterID)\n")
            p.expect(inspect, stdout: running + "\n")
            p.expect(
                ["kind", "get", "kubeconfig", "--name", clusterID],
                stdout: ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
            _ = try await StartAction(ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), wait: false, progress: .plain))
            #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.calls.map(\.arguments))")
        }
        let reported = h.ctx.diagnostics.all.filter { $0.message.contains("node image") }
        #expect(
            reported.map(\.message) == [
                "kind cluster '\(clusterID)' runs node image kindest/node:v1.29.2@sha256:51a1, "
                    + "not the spec's kind-node-image \(Self.image)"
            ])
        #expect(reported.first?.hint?.contains("kind delete cluster --name \(clusterID)") == true)
    }
}
