import Foundation
import SoSystem
import Testing

@testable import SoTestSupport

/// Test temp dirs are removed as the process exits (`TempDir.Registry`), not left in /tmp by every test that did not
/// call `cleanup()`; `SO_TEST_KEEP_TMP=1` keeps them.
@Suite struct TempDirTests {
    @Test func aRegistryRemovesWhatWasMadeUnlessKept() throws {
        let fs = LocalFileSystem()
        let made = try TempDir("so-registry")
        try made.write("inside/file", "x")
        let registry = TempDir.Registry()
        registry.made(made.path)
        registry.removeAll(keep: true)
        #expect(fs.exists(made.file("inside/file")))
        registry.removeAll(keep: false)
        #expect(!fs.exists(made.path))
        // Each is removed once: a second call has nothing left to remove.
        try fs.createDirectory(made.path)
        registry.removeAll(keep: false)
        #expect(fs.exists(made.path))
        made.cleanup()
    }

    /// Every TempDir is the process registry's.
    @Test func everyTempDirIsRegistered() throws {
        let made = try TempDir("so-registry")
        defer { made.cleanup() }
        #expect(TempDir.Registry.shared.holds(made.path))
    }
}
