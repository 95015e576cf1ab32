import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// Warm pools: members made ahead, found by their Namespace, claimed once each (a Lease the API server lets
/// one creator make), refused when they do not fit, given back when the claim is interrupted.
@Suite struct PoolTests {
    static let origin = "https://github.com/acme/web.git"

    func source(origin: String = PoolTests.origin) -> WorkspaceSource {
        WorkspaceSource(
            repository: "/src/web", branch: "main", base: "abc", subject: "first", origin: origin, commits: 1,
            localCommits: 0, uncommitted: 0, uncommittedCarried: false)
    }

    /// A pool of `size` on the fake cluster, every member's agent container running.
    func pool(_ w: WorkspaceHarness, size: Int, config: [String] = []) async throws -> PoolRecord {
        var record = PoolRecord(name: "warm", stack: "agent-workspace", size: size)
        record.config = config
        let members = try await PoolAction(w.ctx).create(record, cluster: w.clusterOptions)
        #expect(members.count == size && members.allSatisfy { !$0.warm })
        for m in members {
            try w.cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: "\(m.listing.id)-agent-x", namespace: m.listing.namespace,
                    labels: [("app", m.listing.id)],
                    body: [
                        (
                            "status",
                            .map([
                                (
                                    "containerStatuses",
                                    .list([
                                        .map([("name", .string("agent")), ("state", .map([("running", .map([]))]))])
                                    ])
                                )
                            ])
                        )
                    ]))
        }
        return record
    }

    @Test func membersAreMadeFoundAndResized() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 3)
        let members = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        #expect(members.count == 3 && members.allSatisfy(\.warm))
        for m in members {
            #expect(m.listing.name.hasPrefix("warm-") && m.listing.namespace == m.listing.name)
            let env = try w.h.read("so-home/deployments/\(m.listing.name)/config.env")
            #expect(env.contains("GIT_CARRY=bundle") && env.contains("GIT_REPO=\n"), "\(env)")
        }
        #expect(try PoolRecord.load(w.ctx, "warm") == p)
        var smaller = p
        smaller.size = 1
        #expect(try await PoolAction(w.ctx).create(smaller, cluster: w.clusterOptions).count == 1)
        try await PoolAction(w.ctx).remove("warm", cluster: w.clusterOptions)
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty)
        #expect(try PoolRecord.load(w.ctx, "warm") == nil)
    }

    @Test func eachMemberIsClaimedOnceAndBecomesTheWorkspace() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 2)
        let claim = PoolClaim(ctx: w.ctx)
        var got: [String] = []
        for name in ["one", "two", "three"] {
            let dir = try w.ctx.namedDeployment(name)
            if let c = try await claim.claim(p, name: name, dir: dir, source: source(), cluster: w.clusterOptions) {
                got.append(c.member)
                #expect(w.h.fs.isDirectory(dir) && !w.h.fs.isDirectory(w.h.path("so-home/deployments/\(c.member)")))
                let ns = try #require(w.cluster.object("Namespace", c.namespace))
                #expect(ns.annotations["laconic.com/deployment-dir"] == dir && ns.annotations["so.dev/pool"] == nil)
            }
        }
        #expect(got.count == 2 && Set(got).count == 2, "two members, two workspaces: \(got)")
        #expect(w.h.console.stdout.contains("pool warm has no warm workspace; starting three cold"))
        let listed = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(Set(listed.map(\.name)) == ["one", "two"], "\(listed.map(\.name))")
    }

    @Test func aMemberAnotherUpClaimedFirstIsPassedOver() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 2)
        let first = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)[0].listing
        // Another up's claim on the first member landed a moment before this one's.
        try w.cluster.seed(
            KubeObject(
                apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-pool-claim", namespace: first.namespace))
        let c = try await PoolClaim(ctx: w.ctx).claim(
            p, name: "mine", dir: try w.ctx.namedDeployment("mine"), source: source(), cluster: w.clusterOptions)
        #expect(c != nil && c?.member != first.name)
    }

    @Test func membersThatDoNotFitAreNotClaimedAndSaySo() async throws {
        var w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let claim = PoolClaim(ctx: w.ctx)
        let dir = try w.ctx.namedDeployment("mine")
        // An origin the members' egress does not reach.
        let far = try await claim.claim(
            p, name: "mine", dir: dir, source: source(origin: "https://git.example.org/acme/web.git"),
            cluster: w.clusterOptions)
        #expect(far == nil && w.h.console.stdout.contains("its egress does not reach this checkout's origin"))
        // Other credentials than those the members were made with.
        w.ctx.environment["ANTHROPIC_API_KEY"] = "another-test-key-not-real"
        let other = try await PoolClaim(ctx: w.ctx).claim(
            p, name: "mine", dir: dir, source: source(), cluster: w.clusterOptions)
        #expect(other == nil && w.h.console.stdout.contains("its ANTHROPIC_API_KEY is not the one in your environment"))
        #expect(
            !w.h.console.stdout.contains("another-test-key-not-real")
                && !w.h.console.stdout.contains("test-anthropic-key"))
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).count == 1, "nothing claimed")
        // Other options: named, for an explicit --pool refused.
        var req = UpRequest(stack: "agent-workspace")
        req.with = ["postgres"]
        #expect(claim.mismatch(p, req) == "its --with is none, this workspace's postgres")
        req.with = nil
        req.config = ["GIT_USER_NAME=me", "LOG_LEVEL=debug"]
        #expect(claim.mismatch(p, req) == "its --config differs in LOG_LEVEL")
        req.pool = "warm"
        #expect(throws: SoError.self) { try claim.choose(req) }
        req.config = ["GIT_USER_NAME=me"]
        #expect(try claim.choose(req)?.name == "warm")
    }
}
