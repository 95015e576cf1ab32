import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// `so up`'s choice of image: the agent's own (`image:` in `agents:`) when a node of the cluster has it, else the
/// stack's default, said either way; `--config AGENT_IMAGE=…` wins without asking the cluster.
@Suite struct AgentImageTests {
    static func node(images: [String]) -> KubeObject {
        KubeObject(
            apiVersion: "v1", kind: "Node", name: "so-node",
            body: [
                (
                    "status",
                    .map([
                        (
                            "images",
                            .list(images.map { .map([("names", .list([.string($0)])), ("sizeBytes", .int(1))]) })
                        )
                    ])
                )
            ])
    }

    func image(_ w: WorkspaceHarness, _ name: String) throws -> String? {
        try ConfigEnv.load(w.h.path("so-home/deployments/\(name)/config.env"), fs: w.h.fs)
            .first { $0.key == "AGENT_IMAGE" }?.value
    }

    @Test func theAgentsImageIsRunWhenANodeHasIt() async throws {
        let w = try WorkspaceHarness()
        try w.cluster.seed(Self.node(images: ["docker.io/library/so-agent-workspace-claude:local"]))
        try await w.up("with", config: ["GIT_REPO=https://github.com/acme/web"])
        #expect(try image(w, "with") == "so-agent-workspace-claude:local")
        #expect(
            w.h.console.stdout.contains("agent image: so-agent-workspace-claude:local (claude's, found on the cluster)")
        )
        // The user's AGENT_IMAGE wins.
        try await w.up("mine", config: ["GIT_REPO=https://github.com/acme/web", "AGENT_IMAGE=my-agent:1"])
        #expect(try image(w, "mine") == "my-agent:1")
    }

    @Test func withoutItTheStacksImageRunsAndTheBuildIsNamed() async throws {
        let w = try WorkspaceHarness()
        // Another agent's image, and one of the same name from another registry, are not claude's.
        try w.cluster.seed(
            Self.node(images: [
                "docker.io/library/so-agent-workspace-aider:local", "localhost/so-agent-workspace-claude:local",
            ]))
        try await w.up("without", config: ["GIT_REPO=https://github.com/acme/web"])
        #expect(try image(w, "without") == "so-agent-workspace:local")
        #expect(
            w.h.console.stdout.contains(
                "is not on the cluster's nodes: the workspace runs the stack's default image, without claude's CLI (build it: so build-containers --stack agent-workspace --agent claude"
            ), "\(w.h.console.stdout)")
    }

    @Test func namesWithoutARegistryAreDockerHubs() {
        #expect(AgentImage.sameImage("x:local", "docker.io/library/x:local"))
        #expect(AgentImage.sameImage("team/x:1", "docker.io/team/x:1"))
        #expect(!AgentImage.sameImage("x:local", "localhost/x:local"))
        #expect(!AgentImage.sameImage("x:local", "x:other"))
        #expect(AgentImage.sameImage("registry.example:5000/x:1", "registry.example:5000/x:1"))
    }
}
