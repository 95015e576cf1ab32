import Foundation
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoWorkspace

/// A claim hands in from the claimer's environment only the names the pool's creator recorded
/// (`PoolRecord.secretEnv`), into the claimed member's namespace only: a member's record is anyone's to write who may
/// write Secrets in its namespace, and its `secret-env` is not what decides.
@Suite struct ClaimCredentialsTests {
    @Test func aClaimHandsInThePoolsNamesOnly() async throws {
        let w = try WorkspaceHarness()
        var req = UpRequest(stack: "agent-workspace")
        req.name = "ws"
        req.cluster = w.clusterOptions
        req.timeout = 30
        req.progress = .plain
        _ = try await UpAction(w.ctx).run(req)
        let dir = w.h.path("so-home/deployments/ws")
        // The member's files name ANTHROPIC_API_KEY (the stack's agent's); the pool was made with no name.
        var ctx = w.ctx
        ctx.environment["ANTHROPIC_API_KEY"] = "claimers-secret"
        let container = try await WorkspaceContainer.open(ctx, directory: dir, cluster: w.clusterOptions)
        var pool = PoolRecord(name: "warm", stack: "agent-workspace", size: 1)
        pool.secretEnv = []
        try await ClaimCredentials(ctx: ctx).hand(container, pool: (pool, container.c.namespace))
        let held = w.cluster.object(
            "Secret", DeploymentNames.generatedSecrets(container.c.model.id), namespace: container.c.namespace)
        let claimers = Data("claimers-secret".utf8).base64EncodedString()
        #expect(held?.at("data", "ANTHROPIC_API_KEY")?.string != claimers, "the claimer's value is not handed in")
        #expect(
            ctx.diagnostics.all.contains {
                $0.message.hasPrefix(
                    "secret-env GITHUB_TOKEN, GIT_TOKEN, ANTHROPIC_API_KEY of ws are not handed in from")
            }, "\(ctx.diagnostics.all.map(\.message))")
        // Files that name another namespace than the claimed member's: nothing is handed in.
        let e = await #expect(throws: SoError.self) {
            try await ClaimCredentials(ctx: ctx).hand(container, pool: (pool, "another-namespace"))
        }
        #expect(e?.message.contains("not another-namespace where it was claimed") == true)
    }
}
