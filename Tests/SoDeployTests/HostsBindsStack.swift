import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A small laconic-layout stack (Tests/SoRenderTests/Stacks): extra_hosts with host-gateway and binds.
let hostsBindsStack = Path.join(RepoPaths.root, "Tests/SoRenderTests/Stacks/stacks/hosts-binds")

let kindNetworkInspect = [
    "docker", "network", "inspect", "kind", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}",
]

extension ClusterHarness {
    /// The user's kubeconfig holds the deployment's own kind context: start runs on kind with no kind process.
    func onOwnKindCluster() throws {
        let clusterID = try DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink())
            .clusterID
        try h.tmp.write(
            "user-kubeconfig",
            ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-\(clusterID)"))
        h.processes.missing = []
        // Its nodes are listed (a host path to mount: the node that holds it is the running cluster's).
        h.processes.expect(["kind", "get", "nodes", "--name", clusterID], stdout: "\(clusterID)-control-plane\n")
        // The directory deploy create made for the missing bind source is mounted into the node: checked first.
        let mounts =
            "[{\"Source\":\"\(h.path("dep/data/host-path-hosts-binds-workspace"))\",\"Destination\":\"/mnt/host-path-hosts-binds-workspace\"}]"
        h.processes.expect(
            ["docker", "inspect", "--format", "{{json .Mounts}}", "\(clusterID)-control-plane"], stdout: mounts)
    }

    func startWithoutClusterManagement() async throws {
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(performClusterManagement: false), progress: .plain))
    }

    var hostAliases: [JSON] {
        cluster.object("Deployment", "\(id)-deployment", namespace: id)?["spec"]?["template"]?["spec"]?["hostAliases"]?
            .array ?? []
    }
}
