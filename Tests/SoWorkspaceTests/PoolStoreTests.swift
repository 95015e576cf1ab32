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

/// Pools recorded in the cluster (`PoolStore`): conditional writes, the move of an older so's pool files, a damaged
/// record named, and a machine whose copy of the stack is at another path.
@Suite struct PoolStoreTests {
    func store(_ w: WorkspaceHarness) -> PoolStore { PoolStore(ctx: w.ctx, client: w.cluster) }

    /// Two machines making one pool at once: one wins, the other is refused (not overwritten). A resize over a copy
    /// read before another machine's change is refused too.
    @Test func twoWritersOfOnePoolNeverBothSucceed() async throws {
        let w = try WorkspaceHarness()
        let record = PoolRecord(name: "warm", stack: "agent-workspace", size: 1)
        try await store(w).save(record, over: nil)
        let twice = await #expect(throws: SoError.self) { try await store(w).save(record, over: nil) }
        #expect(twice?.message == "pool warm was changed on the cluster by another so while this one changed it")
        let read = try #require(try await store(w).stored("warm"))
        var bigger = read.record
        bigger.size = 3
        try await store(w).save(bigger, over: read)
        #expect(try await store(w).load("warm")?.size == 3)
        var smaller = read.record
        smaller.size = 0
        let stale = await #expect(throws: SoError.self) { try await store(w).save(smaller, over: read) }
        #expect(stale?.message == twice?.message)
        #expect(try await store(w).load("warm")?.size == 3, "the later write is not lost")
        let secret = try #require(w.cluster.object("Secret", "so.pool.warm", namespace: "so-pools"))
        #expect(secret["type"]?.string == "so.dev/pool.v1" && secret.labels["so.dev/pool-record"] == "warm")
    }

    /// A pool an older so recorded in `$SO_HOME/pools/NAME.json` moves into the cluster the first time pools are read.
    @Test func anOlderSosPoolFileMovesToTheCluster() async throws {
        let w = try WorkspaceHarness()
        try w.h.tmp.write(
            "so-home/pools/old.json", #"{"name": "old", "stack": "agent-workspace", "size": 2, "config": ["A=1"]}"#)
        let all = try await store(w).all()
        #expect(all.map(\.name) == ["old"] && all[0].size == 2 && all[0].config == ["A=1"])
        #expect(!w.h.fs.exists(w.h.path("so-home/pools/old.json")))
        #expect(w.h.console.stdout.contains("pool old: its record moved from"), "\(w.h.console.stdout)")
        #expect(try await store(w).load("old")?.size == 2)
    }

    /// A pool's Secret edited by hand into something else: named, with the way out.
    @Test func aDamagedPoolRecordIsNamed() async throws {
        let w = try WorkspaceHarness()
        try await store(w).save(PoolRecord(name: "warm", stack: "agent-workspace", size: 1), over: nil)
        try w.cluster.seed(
            KubeObject(
                .secret, name: "so.pool.warm", namespace: "so-pools", labels: [("so.dev/pool-record", "warm")],
                body: [("data", .map([("pool", .string(Data("not json".utf8).base64EncodedString()))]))]))
        let e = await #expect(throws: SoError.self) { try await store(w).all() }
        #expect(e?.message.hasPrefix("the pool Secret so-pools/so.pool.warm is not a pool record") == true, "\(e!)")
        #expect(e?.hint == "remove it: so pool remove warm")
    }

    @Test func aPoolNameIsNeverAPath() async throws {
        let w = try WorkspaceHarness()
        for bad in ["../x", "a/b", "..", "", "A"] {
            await #expect(throws: SoError.self) { try await store(w).load(bad) }
        }
    }

    /// Another machine's copy of the stack at another path (a checkout elsewhere) fits the pool when its files are
    /// the same: chosen, and its refill is told where this machine has the stack. A copy that differs does not fit.
    /// A refill where neither is found says so, with the way out.
    @Test func aCopyOfTheStackAtAnotherPathFitsWhenItsFilesAreTheSame() async throws {
        let w = try WorkspaceHarness()
        for layout in ["layout-a", "layout-b"] {
            for d in ["stacks", "compose", "config"] {
                try FileManager.default.copyItem(
                    atPath: Path.join(RepoPaths.root, d), toPath: w.h.path("\(layout)/\(d)"))
            }
        }
        let a = w.h.path("layout-a/stacks/agent-workspace")
        let b = w.ctx.fs.realpath(w.h.path("layout-b/stacks/agent-workspace"))
        _ = try await PoolAction(w.ctx).create(PoolRecord(name: "warm", stack: a, size: 0), cluster: w.clusterOptions)
        var up = UpRequest(stack: b)
        up.cluster = w.clusterOptions
        let choice = try await PoolClaim(ctx: w.ctx).choose(up)
        #expect(choice.pool?.name == "warm" && choice.copy == b, "\(choice)")
        PoolAction(w.ctx).refillDetached(try #require(choice.pool), cluster: w.clusterOptions, stack: choice.copy)
        let args = try #require(w.h.processes.detached.last?.arguments)
        #expect(
            args.contains("--stack") && args.last(where: { $0.hasPrefix("/") && $0.hasSuffix("agent-workspace") }) == b)
        // The copy changed: it is not what the members are made of.
        let compose = w.h.path("layout-b/compose/docker-compose-agent-workspace.yml")
        try (try String(contentsOfFile: compose, encoding: .utf8) + "# changed\n").write(
            toFile: compose, atomically: true, encoding: .utf8)
        #expect(try await PoolClaim(ctx: w.ctx).choose(up).pool == nil)
        // Neither the pool's path nor a copy here.
        var gone = try #require(try await store(w).load("warm"))
        gone.stack = w.h.path("nowhere/stacks/agent-workspace")
        let e = await #expect(throws: SoError.self) {
            try await PoolAction(w.ctx).fill(gone, cluster: w.clusterOptions)
        }
        #expect(e?.message.hasPrefix("pool warm's stack \(gone.stack) cannot be read on this machine") == true)
        #expect(e?.hint == "name this machine's copy of it: so pool fill warm --stack PATH")
    }
}
