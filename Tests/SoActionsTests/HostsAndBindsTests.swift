import Foundation
import Testing
@testable import SoActions
import SoBasics
import SoKube
import SoStack
import SoTestSupport

/// A small laconic-layout stack (Tests/SoRenderTests/Stacks): extra_hosts with host-gateway and binds.
let hostsBindsStack = Path.join(RepoPaths.root, "Tests/SoRenderTests/Stacks/stacks/hosts-binds")
let kindNetworkInspect = ["docker", "network", "inspect", "kind", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}"]

extension ClusterHarness {
    /// The user's kubeconfig holds the deployment's own kind context: start runs on kind with no kind process.
    func onOwnKindCluster() throws {
        let clusterID = try DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink()).clusterID
        try h.tmp.write("user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        h.processes.missing = []
    }

    func startWithoutClusterManagement() async throws {
        _ = try await StartAction(ctx).run(StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
    }

    var hostAliases: [JSON] { cluster.object("Deployment", "\(id)-deployment", namespace: id)?["spec"]?["template"]?["spec"]?["hostAliases"]?.array ?? [] }
}

@Suite struct HostGatewayStartTests {
    @Test func onKindHostGatewayIsTheGatewayOfKindsDockerNetwork() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        try c.onOwnKindCluster()
        c.h.processes.expect(kindNetworkInspect, stdout: "fc00:f853:ccd:e793::1 172.18.0.1 \n")
        try await c.startWithoutClusterManagement()
        #expect(c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))")
        #expect(c.hostAliases.map { $0["ip"]?.string } == ["172.18.0.1", "10.20.30.40"])
        #expect(c.hostAliases.first?["hostnames"]?.array.first?.string == "host.docker.internal")
        #expect(!c.ctx.diagnostics.all.contains { $0.message.contains("host-gateway") }, "\(c.ctx.diagnostics.all)")
    }

    @Test func kindsOwnNetworkOverrideIsRead() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack, environment: ["KIND_EXPERIMENTAL_DOCKER_NETWORK": "kind-ci"])
        try c.onOwnKindCluster()
        var argv = kindNetworkInspect
        argv[3] = "kind-ci"
        c.h.processes.expect(argv, stdout: "10.89.0.1 \n")
        try await c.startWithoutClusterManagement()
        #expect(c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))")
        #expect(c.hostAliases.first?["ip"]?.string == "10.89.0.1")
    }

    /// docker cannot tell (or is absent): the alias is left out with the warning, never sent as "host-gateway".
    @Test func whenDockerCannotTellTheAliasIsLeftOut() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        try c.onOwnKindCluster()
        c.h.processes.expect(kindNetworkInspect, exitCode: 1, stderr: "Error: No such network: kind")
        try await c.startWithoutClusterManagement()
        #expect(c.hostAliases.map { $0["ip"]?.string } == ["10.20.30.40"])
        let warnings = c.ctx.diagnostics.all.filter { $0.message.contains("host.docker.internal:host-gateway") }
        #expect(warnings.count == 1, "\(c.ctx.diagnostics.all)")
        #expect(warnings.first?.location?.file.hasSuffix("dep/compose/docker-compose-hosts-binds.yml") == true)
        #expect(warnings.first?.location?.line == 6)
    }

    /// Not on kind (a kubeconfig was named): no docker process; the alias is left out and reported.
    @Test func offKindWithoutTheSpecKeyTheAliasIsLeftOut() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        _ = try await c.start()
        #expect(!c.h.processes.calls.contains { $0.arguments.first == "docker" }, "\(c.h.processes.calls.map(\.arguments))")
        #expect(c.hostAliases.map { $0["ip"]?.string } == ["10.20.30.40"])
        #expect(c.ctx.diagnostics.all.contains { $0.message.contains("host.docker.internal:host-gateway") && $0.hint?.contains("host-gateway: IP") == true })
    }

    /// The spec's host-gateway: used everywhere, and docker is never asked.
    @Test func theSpecKeyIsUsedWithoutAskingDocker() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack, appendToSpec: "host-gateway: 192.168.5.1\n")
        try c.onOwnKindCluster()
        try await c.startWithoutClusterManagement()
        #expect(c.h.processes.unexpected.isEmpty && !c.h.processes.calls.contains { $0.arguments.first == "docker" })
        #expect(c.hostAliases.first?["ip"]?.string == "192.168.5.1")
    }

    @Test func startDryRunAsksKindTooAndTheServerJudgesTheAddress() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        try c.onOwnKindCluster()
        c.h.processes.expect(kindNetworkInspect, stdout: "172.18.0.1 \n")
        _ = try await PlanAction(c.ctx).run(directory: "dep", cluster: ClusterOptions(performClusterManagement: false))
        #expect(c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))")
        #expect(!c.ctx.diagnostics.all.contains { $0.message.contains("host-gateway") })
    }

    @Test func theGatewayPickedFromDockersAnswer() {
        #expect(HostGatewayFinder.pick("fc00:f853:ccd:e793::1 172.18.0.1 ") == "172.18.0.1")
        #expect(HostGatewayFinder.pick("fc00::1 ") == "fc00::1")
        #expect(HostGatewayFinder.pick(" \n") == nil)
        #expect(HostGatewayFinder.pick("<no value> ") == nil)
    }
}
