import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct HostGatewayStartTests {
    @Test func onKindHostGatewayIsTheGatewayOfKindsDockerNetwork() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        try c.onOwnKindCluster()
        c.h.processes.expect(kindNetworkInspect, stdout: "fc00:f853:ccd:e793::1 172.18.0.1 \n")
        try await c.startWithoutClusterManagement()
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))"
        )
        #expect(c.hostAliases.map { $0["ip"]?.string } == ["172.18.0.1", "10.20.30.40"])
        #expect(c.hostAliases.first?["hostnames"]?.array.first?.string == "host.docker.internal")
        #expect(!c.ctx.diagnostics.all.contains { $0.message.contains("host-gateway") }, "\(c.ctx.diagnostics.all)")
    }

    @Test func kindsOwnNetworkOverrideIsRead() async throws {
        let c = try await ClusterHarness(
            stack: hostsBindsStack, environment: ["KIND_EXPERIMENTAL_DOCKER_NETWORK": "kind-ci"])
        try c.onOwnKindCluster()
        var argv = kindNetworkInspect
        argv[3] = "kind-ci"
        c.h.processes.expect(argv, stdout: "10.89.0.1 \n")
        try await c.startWithoutClusterManagement()
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))"
        )
        #expect(c.hostAliases.first?["ip"]?.string == "10.89.0.1")
    }

    /// On podman (KIND_EXPERIMENTAL_PROVIDER), podman is asked, in its own format, about its own override's network.
    @Test func podmansNetworkIsAskedOfPodman() async throws {
        let c = try await ClusterHarness(
            stack: hostsBindsStack,
            environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman", "KIND_EXPERIMENTAL_PODMAN_NETWORK": "kind-ci"])
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        try c.h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        c.h.processes.missing = []
        let mounts =
            "[{\"Source\":\"\(c.h.path("dep/data/host-path-hosts-binds-workspace"))\",\"Destination\":\"/mnt/host-path-hosts-binds-workspace\"}]"
        c.h.processes.expect(["kind", "get", "nodes", "--name", clusterID], stdout: "\(clusterID)-control-plane\n")
        c.h.processes.expect(
            ["podman", "inspect", "--format", "{{json .Mounts}}", "\(clusterID)-control-plane"], stdout: mounts)
        c.h.processes.expect(
            ["podman", "network", "inspect", "kind-ci", "--format", "{{range .Subnets}}{{.Gateway}} {{end}}"],
            stdout: "fc00:8866:27d0:bd7e::1 10.89.0.1 \n")
        try await c.startWithoutClusterManagement()
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))"
        )
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
        #expect(
            !c.h.processes.calls.contains { $0.arguments.first == "docker" }, "\(c.h.processes.calls.map(\.arguments))")
        #expect(c.hostAliases.map { $0["ip"]?.string } == ["10.20.30.40"])
        #expect(
            c.ctx.diagnostics.all.contains {
                $0.message.contains("host.docker.internal:host-gateway")
                    && $0.hint?.contains("host-gateway: IP") == true
            })
    }

    /// The spec's host-gateway: used everywhere, and docker is never asked.
    @Test func theSpecKeyIsUsedWithoutAskingDocker() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack, appendToSpec: "host-gateway: 192.168.5.1\n")
        try c.onOwnKindCluster()
        try await c.startWithoutClusterManagement()
        #expect(
            c.h.processes.unexpected.isEmpty
                && !c.h.processes.calls.contains { $0.arguments.starts(with: ["docker", "network"]) },
            "\(c.h.processes.calls.map(\.arguments))")
        #expect(c.hostAliases.first?["ip"]?.string == "192.168.5.1")
    }

    @Test func startDryRunAsksKindTooAndTheServerJudgesTheAddress() async throws {
        let c = try await ClusterHarness(stack: hostsBindsStack)
        try c.onOwnKindCluster()
        c.h.processes.expect(kindNetworkInspect, stdout: "172.18.0.1 \n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), dryRun: true)
        ).plan
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty, "\(c.h.processes.calls.map(\.arguments))"
        )
        #expect(!c.ctx.diagnostics.all.contains { $0.message.contains("host-gateway") })
    }

    @Test func theGatewayPickedFromDockersAnswer() {
        #expect(HostGatewayFinder.pick("fc00:f853:ccd:e793::1 172.18.0.1 ") == "172.18.0.1")
        #expect(HostGatewayFinder.pick("fc00::1 ") == "fc00::1")
        #expect(HostGatewayFinder.pick(" \n") == nil)
        #expect(HostGatewayFinder.pick("<no value> ") == nil)
    }
}
