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

    /// The pool `name` as the (fake) cluster holds it.
    static func stored(_ w: WorkspaceHarness, _ name: String) async throws -> PoolRecord? {
        try await PoolStore(ctx: w.ctx, client: w.cluster).load(name)
    }

    /// A pool of `size` on the fake cluster, every member's agent container running.
    func pool(_ w: WorkspaceHarness, size: Int, config: [String] = []) async throws -> PoolRecord {
        var record = PoolRecord(name: "warm", stack: "agent-workspace", size: size)
        record.config = config
        let members = try await PoolAction(w.ctx).create(record, cluster: w.clusterOptions)
        #expect(members.count == size)
        // Their agent containers run (unless the harness runs them as their Deployments are applied).
        for m in members where !m.warm {
            try w.cluster.seed(AgentPod.running(id: m.listing.id, namespace: m.listing.namespace))
        }
        return try #require(try await PoolTests.stored(w, "warm"))
    }

    /// What the detached refills a claim started would do (`so pool fill POOL --at-most 1 --after 1`, each), run here
    /// (without the wait): the fake
    /// process runner only records them.
    static func runRefills(_ w: WorkspaceHarness, after seen: Int = 0) async throws -> Int {
        let refills = w.h.processes.detached.dropFirst(seen)
        for r in refills {
            let a = r.arguments
            guard a.count >= 8, Array(a[1...2]) == ["pool", "fill"],
                Array(a[4...7]) == ["--at-most", "1", "--after", "1.0"]
            else {
                Issue.record("not a refill: \(a)")
                continue
            }
            let record = try #require(try await PoolTests.stored(w, a[3]))
            _ = try await PoolAction(w.ctx).fill(record, cluster: w.clusterOptions, atMost: 1)
        }
        return refills.count
    }

    /// A claim's refill runs detached; removing the pool waits for it to end, so no member it makes is left behind.
    @Test func removingAPoolWaitsForItsRefill() async throws {
        var w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let other = p.name
        PoolAction(w.ctx).refillDetached(p, cluster: w.clusterOptions)
        #expect(w.h.processes.detached.map(\.arguments.count) == [10])
        let looks = Counter()
        w.ctx.isProcessAlive = { pid in pid == 40001 && looks.next() < 6 }
        #expect(PoolAction(w.ctx).refilling(other) == 40001)
        let slept = w.clock.slept
        try await PoolAction(w.ctx).remove(other, cluster: w.clusterOptions)
        #expect(w.h.console.stdout.contains("pool warm: waiting for its refill (so pool fill, pid 40001) to end"))
        #expect(looks.value >= 6 && w.clock.slept - slept >= 0.4, "\(looks.value)")
        #expect(PoolAction(w.ctx).refilling(other) == nil && !w.h.fs.exists(w.h.path("so-home/pools/warm.refill")))
    }

    /// Two claims a moment apart start two refills: a removal waits for both (each one's process id is kept), not
    /// only the last's.
    @Test func removingAPoolWaitsForEveryRefillUnderWay() async throws {
        var w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let looks = Counter()
        // The first refill outlives the second.
        w.ctx.isProcessAlive = { pid in pid == 40001 ? looks.next() < 8 : pid == 40002 && looks.value < 3 }
        PoolAction(w.ctx).refillDetached(p, cluster: w.clusterOptions)
        PoolAction(w.ctx).refillDetached(p, cluster: w.clusterOptions)
        #expect(try w.h.read("so-home/pools/warm.refill") == "40001\n40002\n")
        try await PoolAction(w.ctx).remove(p.name, cluster: w.clusterOptions)
        #expect(
            w.h.console.stdout.contains("pool warm: waiting for its refills (so pool fill, pids 40001, 40002) to end"))
        #expect(looks.value >= 8, "the removal went on before the first refill ended: \(looks.value) looks")
    }

    /// A member a fill makes while the pool is removed (on another machine, say: its refill is not waited for) is not
    /// left behind: the removal listed the members before it was one, so the fill, finding the record gone after it
    /// made it, removes it.
    @Test func aMemberMadeWhileItsPoolIsRemovedIsRemovedByItsFill() async throws {
        let w = try WorkspaceHarness()
        var p = try await pool(w, size: 1)
        let first = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        p.size = 2
        let removal = Counter()
        let ctx = w.ctx
        let options = w.clusterOptions
        w.cluster.beforeCallAsync = { call in
            // The new member's Deployments are being applied: the record's check is behind it, its annotation ahead.
            guard call.hasPrefix("apply Deployment"), removal.next() == 1 else { return }
            try? await PoolAction(ctx).remove("warm", cluster: options)
        }
        _ = try await PoolAction(w.ctx).fill(p, cluster: w.clusterOptions, atMost: 1)
        w.cluster.beforeCallAsync = nil
        #expect(w.h.console.stdout.contains("removed pool warm"))
        #expect(w.h.console.stdout.contains("pool warm was removed while warm-"), "\(w.h.console.stdout)")
        let left = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(
            left.isEmpty, "left behind: \(left.map(\.name)); the pool's first member was \(first.map(\.listing.name))")
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
        #expect(try await PoolTests.stored(w, "warm") == p && !p.files.isEmpty)
        var smaller = p
        smaller.size = 1
        #expect(try await PoolAction(w.ctx).create(smaller, cluster: w.clusterOptions).count == 1)
        try await PoolAction(w.ctx).remove("warm", cluster: w.clusterOptions)
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty)
        #expect(try await PoolTests.stored(w, "warm") == nil)
    }

    @Test func eachMemberIsClaimedOnceAndBecomesTheWorkspace() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 2)
        let claim = PoolClaim(ctx: w.ctx)
        var got: [String] = []
        for name in ["one", "two", "three"] {
            let dir = try w.ctx.namedDeployment(name)
            if let c = try await claim.claim(
                p, name: name, dir: dir, reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin),
                cluster: w.clusterOptions)
            {
                got.append(c.member)
                // The workspace's name goes on its Namespace beside the hand-over (`Claimed.named`).
                _ = try await c.named?.value
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
            p, name: "mine", dir: try w.ctx.namedDeployment("mine"),
            reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin), cluster: w.clusterOptions)
        #expect(c != nil && c?.member != first.name)
    }

    /// A removal takes a member's claim Lease as a claim does: one an up is claiming at that moment is kept (said),
    /// and the others go.
    @Test func aMemberAnUpIsClaimingIsNotRemoved() async throws {
        let w = try WorkspaceHarness()
        _ = try await pool(w, size: 2)
        let members = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        let taken = members[0].listing
        try w.cluster.seed(PoolClaim.lease(taken, holder: "mine@elsewhere"))
        try await PoolAction(w.ctx).remove("warm", cluster: w.clusterOptions)
        #expect(w.h.console.stdout.contains("pool: kept \(taken.name): an up is claiming it"))
        #expect(w.cluster.object("Namespace", taken.namespace) != nil, "the member being claimed stays")
        #expect(w.cluster.object("Namespace", members[1].listing.namespace) == nil, "the other goes")
    }

    @Test func membersThatDoNotFitAreNotClaimedAndSaySo() async throws {
        let w = try WorkspaceHarness()
        let p = try await pool(w, size: 1)
        let claim = PoolClaim(ctx: w.ctx)
        let dir = try w.ctx.namedDeployment("mine")
        // An origin the members' egress does not reach.
        let far = try await claim.claim(
            p, name: "mine", dir: dir, reach: .init(key: "GIT_ORIGIN", url: "https://git.example.org/acme/web.git"),
            cluster: w.clusterOptions)
        #expect(
            far == nil && w.h.console.stdout.contains("its egress does not reach https://git.example.org/acme/web.git"))
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).count == 1, "nothing claimed")
        // Other options: named, for an explicit --pool refused.
        var req = UpRequest(stack: "agent-workspace")
        req.cluster = w.clusterOptions
        req.with = ["postgres"]
        #expect(claim.mismatch(p, req) == "its --with is none, this workspace's postgres")
        req.with = nil
        req.config = ["GIT_USER_NAME=me", "LOG_LEVEL=debug"]
        #expect(claim.mismatch(p, req) == "its --config differs in LOG_LEVEL")
        req.pool = "warm"
        await #expect(throws: SoError.self) { try await claim.choose(req) }
        req.config = ["GIT_USER_NAME=me"]
        #expect(try await claim.choose(req).pool?.name == "warm")
    }
}

@Suite struct PoolStackPathTests {
    /// A pool made from a relative path records it absolute: an up that names the same stack by another relative
    /// path, from another directory, finds it (and a refill, which runs in no particular directory, its stack).
    @Test func aPoolMadeFromARelativePathIsFoundFromAnotherDirectory() async throws {
        var w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout"))
        _ = try await PoolAction(w.ctx).create(
            PoolRecord(name: "warm", stack: "./stacks/agent-workspace", size: 0), cluster: w.clusterOptions)
        let saved = try #require(try await PoolTests.stored(w, "warm"))
        #expect(saved.stack == w.ctx.fs.realpath(w.h.path("layout/stacks/agent-workspace")), "\(saved.stack)")
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout/compose"))
        var up = UpRequest(stack: "../stacks/agent-workspace")
        up.cluster = w.clusterOptions
        #expect(try await PoolClaim(ctx: w.ctx).choose(up).pool?.name == "warm")
        // The built-in stack is the same files: it fits, as a copy of the pool's (named to its refill).
        up.stack = "agent-workspace"
        let builtIn = try await PoolClaim(ctx: w.ctx).choose(up)
        #expect(builtIn.pool?.name == "warm" && builtIn.copy == "agent-workspace", "\(builtIn)")
    }

    /// The pool chosen ahead (while `up` reads the checkout) is chosen in silence; what it passed over is said when
    /// the claim takes it, as a choice made then says it.
    @Test func aPoolChosenAheadSaysWhatItPassedOverWhenTaken() async throws {
        var w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        w.ctx.fs = LocalFileSystem(currentDirectory: w.h.path("layout"))
        var debug = PoolRecord(name: "a-debug", stack: "./stacks/agent-workspace", size: 0)
        debug.config = ["LOG_LEVEL=debug"]
        _ = try await PoolAction(w.ctx).create(debug, cluster: w.clusterOptions)
        _ = try await PoolAction(w.ctx).create(
            PoolRecord(name: "b-plain", stack: "./stacks/agent-workspace", size: 0), cluster: w.clusterOptions)
        var req = UpRequest(stack: "./stacks/agent-workspace")
        req.cluster = w.clusterOptions
        let before = w.h.console.stdout
        let listing = try #require(PoolClaim.Listing.ahead(w.ctx, req, existing: false))
        defer { listing.members.cancel() }
        #expect(try await listing.choice.value.pool?.name == "b-plain")
        #expect(w.h.console.stdout == before, "chosen ahead in silence")
        #expect(try await listing.chosen(w.ctx).pool?.name == "b-plain")
        let said = String(w.h.console.stdout.dropFirst(before.count))
        #expect(said.contains("pool a-debug not used: its --config differs in LOG_LEVEL"), "\(said)")
        #expect(try await PoolClaim(ctx: w.ctx).choose(req).pool?.name == "b-plain")
    }
}

@Suite struct PoolStaleTests {
    @Test func aPoolWhoseStackChangedIsRefusedNamingTheFiles() async throws {
        let w = try WorkspaceHarness()
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("layout/\(d)"))
        }
        let stack = w.h.path("layout/stacks/agent-workspace")
        let record = PoolRecord(name: "warm", stack: stack, size: 1)
        _ = try await PoolAction(w.ctx).create(record, cluster: w.clusterOptions)
        let saved = try #require(try await PoolTests.stored(w, "warm"))
        #expect(saved.files.keys.contains("compose/docker-compose-agent-workspace.yml"), "\(saved.files.keys.sorted())")
        #expect(saved.files.keys.contains("config/agent-workspace/clone.sh"))
        var req = UpRequest(stack: stack)
        req.cluster = w.clusterOptions
        #expect(PoolClaim(ctx: w.ctx).mismatch(saved, req) == nil)
        let compose = w.h.path("layout/compose/docker-compose-agent-workspace.yml")
        try (try String(contentsOfFile: compose, encoding: .utf8) + "# changed\n").write(
            toFile: compose, atomically: true, encoding: .utf8)
        #expect(
            PoolClaim(ctx: w.ctx).mismatch(saved, req)
                == "it no longer matches its stack (compose/docker-compose-agent-workspace.yml changed)")
        req.pool = "warm"
        await #expect(throws: SoError.self) { try await PoolClaim(ctx: w.ctx).choose(req) }
        let refill = await #expect(throws: SoError.self) {
            try await PoolAction(w.ctx).fill(saved, cluster: w.clusterOptions)
        }
        #expect(
            refill?.message
                == "pool warm no longer matches its stack: compose/docker-compose-agent-workspace.yml changed since it was made"
        )
    }
}

@Suite struct PoolConfinementTests {
    /// A pool is the cluster's: another machine (another host, another $SO_HOME) lists it and its members, and its
    /// `up` claims a member made here: the workspace's directory there is made from the member's record in the
    /// cluster (its directory here stays where it is, holding nothing of the claimer's).
    @Test func anotherMachineListsThePoolAndClaimsAMemberFromItsRecord() async throws {
        var w = try WorkspaceHarness()
        let p = try await PoolTests().pool(w, size: 1)
        let member = try #require(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).first)
        w.ctx.hostName = "other-host"
        w.ctx.environment["SO_HOME"] = w.h.path("another-home")
        #expect(try await PoolStore(ctx: w.ctx, client: w.cluster).all().map(\.name) == ["warm"])
        let there = try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions)
        #expect(there.map(\.listing.name) == [member.listing.name] && there[0].warm)
        let dir = try w.ctx.namedDeployment("mine")
        #expect(dir == w.h.path("another-home/deployments/mine"))
        let c = try await PoolClaim(ctx: w.ctx).claim(
            p, name: "mine", dir: dir, reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin),
            cluster: w.clusterOptions)
        #expect(c?.member == member.listing.name && c?.namespace == member.listing.namespace)
        _ = try await c?.named?.value
        for file in ["spec.yml", "stack.yml", "deployment.yml", "config.env"] {
            #expect(w.h.fs.isFile(Path.join(dir, file)), "\(file) made from the member's record")
        }
        let made = try DeploymentLoader.load(dir, fs: w.ctx.fs, diagnostics: DiagnosticSink.dropped("test"))
        #expect(made.id == member.listing.id)
        let ns = try #require(w.cluster.object("Namespace", member.listing.namespace))
        #expect(ns.annotations["laconic.com/deployment-dir"] == dir && ns.annotations["so.dev/pool"] == nil)
        #expect(w.cluster.object("Lease", "so-pool-claim", namespace: member.listing.namespace) != nil)
        #expect(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).isEmpty, "claimed")
    }

    /// A member with no record to make its directory from (made by an older so) is given back, and nothing of
    /// it is left in the claimer's home.
    @Test func aMemberOfAnotherMachineWithoutARecordIsGivenBack() async throws {
        var w = try WorkspaceHarness()
        let p = try await PoolTests().pool(w, size: 1)
        let member = try #require(try await PoolAction(w.ctx).members("warm", cluster: w.clusterOptions).first)
        let records = w.cluster.all.filter {
            $0.0.type == .secret && $0.0.namespace == member.listing.namespace && $0.1.labels["so.dev/record-of"] != nil
        }
        #expect(!records.isEmpty, "the member's start wrote its record")
        for (k, _) in records { w.cluster.remove("Secret", k.name, namespace: k.namespace) }
        w.ctx.environment["SO_HOME"] = w.h.path("another-home")
        let dir = try w.ctx.namedDeployment("mine")
        let e = await #expect(throws: SoError.self) {
            try await PoolClaim(ctx: w.ctx).claim(
                p, name: "mine", dir: dir, reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin),
                cluster: w.clusterOptions)
        }
        #expect(e?.message == "pool warm's member \(member.listing.name) has no record in the cluster to claim it from")
        #expect(!w.h.fs.exists(dir))
        #expect(w.cluster.object("Lease", "so-pool-claim", namespace: member.listing.namespace) == nil)
    }

    /// A member whose files cannot be read once its Lease is taken is given back, and the up fails saying why.
    @Test func aClaimThatFailsBeforeTheMoveGivesTheMemberBack() async throws {
        let w = try WorkspaceHarness()
        let p = try await PoolTests().pool(w, size: 1)
        let member = try #require(try await PoolAction(w.ctx).members(p.name, cluster: w.clusterOptions).first)
        try w.h.fs.remove(w.h.path("so-home/deployments/\(member.listing.name)/deployment.yml"))
        await #expect(throws: SoError.self) {
            try await PoolClaim(ctx: w.ctx).claim(
                p, name: "mine", dir: try w.ctx.namedDeployment("mine"),
                reach: .init(key: "GIT_ORIGIN", url: PoolTests.origin), cluster: w.clusterOptions)
        }
        #expect(w.cluster.object("Lease", "so-pool-claim", namespace: member.listing.namespace) == nil)
    }
}
