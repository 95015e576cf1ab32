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

/// `workspace: {pool: N}` in the stack's spec-defaults: the first `so up` makes the pool (named after the stack),
/// the next claims from it, and a new N resizes it.
@Suite(.serialized) struct PoolFromSpecTests {
    func stack(_ c: CarryHarness, pool: Int) throws -> String {
        if !c.w.h.fs.isDirectory(c.w.h.path("layout")) {
            for d in ["stacks", "compose", "config"] {
                try FileManager.default.copyItem(
                    atPath: Path.join(RepoPaths.root, d), toPath: c.w.h.path("layout/\(d)"))
            }
        }
        let path = c.w.h.path("layout/stacks/agent-workspace/stack.yml")
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(
            of: #"\n    pool: \d+"#, with: "", options: .regularExpression
        ).replacingOccurrences(of: "    agent: claude\n", with: "    agent: claude\n    pool: \(pool)\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return c.w.h.path("layout/stacks/agent-workspace")
    }

    func up(_ c: CarryHarness, _ stack: String, _ name: String) async throws -> UpResult {
        var req = UpRequest(stack: stack)
        req.name = name
        req.config = ["GIT_REPO=https://github.com/acme/web"]
        req.cluster = c.w.clusterOptions
        req.wait = false
        return try await UpAction(c.w.ctx).run(req)
    }

    @Test func theFirstUpMakesThePoolTheNextClaimsAndANewSizeResizes() async throws {
        let c = try await CarryHarness()
        var stack = try self.stack(c, pool: 2)
        let first = try await up(c, stack, "one")
        #expect(first.note != "claimed from pool agent-workspace", "the first starts cold: \(first)")
        let record = try #require(try await PoolTests.stored(c.w, "agent-workspace"))
        #expect(
            record.size == 2 && record.stack == stack && record.config == ["GIT_REPO=https://github.com/acme/web"]
                && record.fromSpec == true, "\(record)")
        #expect(c.w.h.console.stdout.contains("pool agent-workspace: 2 warm workspaces on the way"))
        #expect(try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).count == 2)
        let second = try await up(c, stack, "two")
        #expect(second.note == "claimed from pool agent-workspace", "\(second)")
        #expect(try await PoolTests.runRefills(c.w) == 1)
        #expect(try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).count == 2)
        let before = Set(
            try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions).map(\.listing.name))
        // The stack changes (its pool: with it): its members no longer match it, so the next up starts cold, and the
        // pool is made again from the stack as it is, at the new size.
        stack = try self.stack(c, pool: 3)
        let third = try await up(c, stack, "three")
        #expect(third.note != "claimed from pool agent-workspace")
        #expect(c.w.h.console.stdout.contains("pool agent-workspace: 3 warm workspaces on the way"))
        let after = try await PoolAction(c.w.ctx).members("agent-workspace", cluster: c.w.clusterOptions)
        #expect(after.count == 3 && before.isDisjoint(with: after.map(\.listing.name)), "\(before) \(after)")
        #expect(try await PoolTests.stored(c.w, "agent-workspace")?.size == 3)
        // A pool of that name made by hand with other options is not the spec's: left as it is, saying so.
        try await PoolAction(c.w.ctx).remove("agent-workspace", cluster: c.w.clusterOptions)
        var mine = PoolRecord(name: "agent-workspace", stack: stack, size: 1)
        mine.with = ["postgres"]
        _ = try await PoolAction(c.w.ctx).create(mine, cluster: c.w.clusterOptions)
        _ = try await up(c, stack, "four")
        #expect(
            c.w.h.console.stdout.contains(
                "pool agent-workspace is not kept for the spec's workspace.pool: its --with is postgres"),
            "\(c.w.h.console.stdout)")
        #expect(try await PoolTests.stored(c.w, "agent-workspace")?.size == 1)
    }

    @Test func aPoolSizeThatIsNotZeroToFiftyIsRefusedNamingTheLine() throws {
        let h = try Harness()
        try h.tmp.write(
            "bad/spec.yml", "stack: agent-workspace\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  pool: 99\n")
        let e = #expect(throws: SoError.self) {
            try Spec.load(h.path("bad/spec.yml"), fs: h.fs, diagnostics: DiagnosticSink())
        }
        #expect(e?.message == "workspace pool 99 is not a number from 0 to 50", "\(String(describing: e))")
        #expect(String(describing: e).contains("spec.yml:5"), "names the line: \(String(describing: e))")
    }
}
