import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

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
