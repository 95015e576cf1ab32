import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy
@testable import SoWorkspace

/// Every call forwarded to `base`; test file systems override what they watch.
class ForwardingFileSystem: FileSystem, @unchecked Sendable {
    let base: FileSystem
    init(base: FileSystem) { self.base = base }
    func write(_ data: Data, to path: String) throws { try base.write(data, to: path) }
    func kind(_ path: String) -> FileKind? { base.kind(path) }
    func readData(_ path: String) throws -> Data { try base.readData(path) }
    func list(_ directory: String) throws -> [String] { try base.list(directory) }
    func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    func remove(_ path: String) throws { try base.remove(path) }
    func removeTree(_ path: String) throws { try base.removeTree(path) }
    func move(_ from: String, to: String) throws { try base.move(from, to: to) }
    func replace(_ path: String, with from: String) throws { try base.replace(path, with: from) }
    func size(_ path: String) throws -> UInt64 { try base.size(path) }
    func realpath(_ path: String) -> String { base.realpath(path) }
    func isExecutable(_ path: String) -> Bool { base.isExecutable(path) }
    func setExecutable(_ path: String, _ executable: Bool) throws { try base.setExecutable(path, executable) }
    var currentDirectory: String { base.currentDirectory }
    var homeDirectory: String { base.homeDirectory }
    func temporaryDirectory(beside path: String, prefix: String) throws -> String {
        try base.temporaryDirectory(beside: path, prefix: prefix)
    }
    func modificationDate(_ path: String) -> Date? { base.modificationDate(path) }
}

/// A file system that interrupts the run (as SIGINT/SIGTERM would) after the Nth file written into a
/// temporary `.creating` directory, and remembers what the run had left at the moment it would exit.
final class InterruptingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let interrupts: Interrupts
    let after: Int
    let signal: Int32
    private(set) var writes = 0

    init(base: FileSystem, interrupts: Interrupts, after: Int, signal: Int32) {
        self.interrupts = interrupts
        self.after = after
        self.signal = signal
        super.init(base: base)
    }

    override func write(_ data: Data, to path: String) throws {
        try base.write(data, to: path)
        guard path.contains(".creating.") else { return }
        writes += 1
        if writes == after { interrupts.interrupt(signal: signal) }
    }
}

final class ExitRecord: @unchecked Sendable {
    var codes: [Int32] = []
    var leftAtExit: [String]?
}

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

/// Atomic writes rename over the target: the target is never removed first, so it always exists.
@Suite struct AtomicWriteTests {
    /// The local file system, remembering what was removed.
    final class Recording: ForwardingFileSystem, @unchecked Sendable {
        var removed: [String] = []
        init() { super.init(base: LocalFileSystem()) }
        override func remove(_ path: String) throws {
            removed.append(path)
            try base.remove(path)
        }
    }

    @Test func renamesOverTheTargetWithoutRemovingIt() throws {
        let t = try TempDir("so-atomic")
        defer { t.cleanup() }
        try t.write("spec.yml", "old\n")
        let fs = Recording()
        try AtomicWrite.text("new\n", to: t.file("spec.yml"), fs: fs)
        #expect(try t.read("spec.yml") == "new\n")
        #expect(fs.removed.isEmpty, "\(fs.removed)")
        #expect(try fs.list(t.path) == ["spec.yml"])
        // A directory in the way is an error, and no temporary is left.
        try fs.createDirectory(t.file("dir.yml"))
        #expect(throws: SoError.self) { try AtomicWrite.text("x", to: t.file("dir.yml"), fs: fs) }
        #expect(try fs.list(t.path).sorted() == ["dir.yml", "spec.yml"])
    }
}
