import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct InterruptTests {
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func interruptedCreateRemovesItsTemporaryBeforeExiting(signal: Int32, code: Int32) async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        let before = try h.fs.list(h.tmp.path)
        let record = ExitRecord()
        let tmpPath = h.tmp.path
        let interrupts = Interrupts(terminate: { code in
            record.codes.append(code)
            record.leftAtExit = try? LocalFileSystem().list(tmpPath)
        })
        var ctx = h.ctx
        let fs = InterruptingFileSystem(base: h.ctx.fs, interrupts: interrupts, after: 3, signal: signal)
        ctx.fs = fs
        ctx.interrupts = interrupts
        // A live process has exited inside interrupt(); under test the next step refuses to run.
        await #expect(throws: SoError.self) {
            try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        }
        #expect(fs.writes == 3)
        #expect(record.codes == [code])
        #expect(record.leftAtExit == before, "left at exit: \(record.leftAtExit ?? [])")
        #expect(try h.fs.list(h.tmp.path) == before)
    }

    @Test func staleTemporariesOfKilledRunsAreRemovedByTheNextCreate() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        let now = h.ctx.clock.now()
        func leftover(_ name: String, age: TimeInterval) throws -> String {
            try h.tmp.write("\(name)/config.env", "A='left by a killed run'\n")
            try FileManager.default.setAttributes(
                [.modificationDate: now.addingTimeInterval(-age)], ofItemAtPath: h.path(name))
            return name
        }
        let dead = try leftover(".dep.creating.999999.a1b2c3", age: 60)  // its process is gone
        let running = try leftover(".dep.creating.4242.d4e5f6", age: 60)  // another create still running
        let ancient = try leftover(".dep.creating.4242.g7h8i9", age: 2 * 86400)  // pid reused since
        let legacy = try leftover(".dep.creating.j0k1l2", age: 2 * 3600)  // made before temporaries carried a pid
        let legacyRecent = try leftover(".dep.creating.m3n4o5", age: 60)
        let other = try leftover(".other.creating.999999.p6q7r8", age: 60)  // another deployment's
        var ctx = h.ctx
        ctx.isProcessAlive = { $0 == 4242 }
        try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        #expect(!h.tmp.exists(dead))
        #expect(h.tmp.exists(running))
        #expect(!h.tmp.exists(ancient))
        #expect(!h.tmp.exists(legacy))
        #expect(h.tmp.exists(legacyRecent))
        #expect(h.tmp.exists(other))
        #expect(h.tmp.exists("dep/config.env"))
        // --update clears them too.
        try h.tmp.write(".dep.creating.999998.s9t0u1/config.env", "A=1\n")
        try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        #expect(!h.tmp.exists(".dep.creating.999998.s9t0u1"))
    }

    @Test func liveTemporariesCarryThePid() throws {
        let tmp = try TempDir("so-tmpname")
        defer { tmp.cleanup() }
        let t = try LocalFileSystem().temporaryDirectory(beside: tmp.file("dep"), prefix: "dep.creating")
        #expect(Path.basename(t).hasPrefix(".dep.creating.\(getpid())."))
    }
}
