import Foundation
import SoBasics
import SoSystem

/// A scratch directory under the system temp dir, removed by `cleanup()`, and in any case as the test process exits
/// (`TempDir.Registry`): no test has to remember, and none is removed while a test, or a process it started, may still
/// use it.
public struct TempDir: Sendable {
    public let path: String
    public init(_ label: String = "so-test") throws {
        let base = NSTemporaryDirectory()
        path = try LocalFileSystem().temporaryDirectory(beside: Path.join(base, "x"), prefix: label)
        Registry.shared.made(path)
    }
    public func file(_ rel: String) -> String { Path.join(path, rel) }
    public func write(_ rel: String, _ text: String) throws { try LocalFileSystem().writeText(text, to: file(rel)) }
    public func read(_ rel: String) throws -> String { try LocalFileSystem().readText(file(rel)) }
    public func exists(_ rel: String) -> Bool { LocalFileSystem().exists(file(rel)) }
    public func cleanup() { try? LocalFileSystem().removeTree(path) }

    /// The temp dirs this test process made, removed as it exits. Before, each was left unless its test called
    /// `cleanup()` (few did): a run of the unit tests left about 270 of them, and 28,000 (4 GB) had piled up in /tmp
    /// when the node's disk ran short (2026-11-29). `SO_TEST_KEEP_TMP=1` keeps them, to look into a failed test's files.
    final class Registry: @unchecked Sendable {
        /// The process's own, removed as it exits.
        static let shared: Registry = {
            let registry = Registry()
            atexit { Registry.shared.removeAll() }
            return registry
        }()
        private let lock = NSLock()
        private var paths: [String] = []

        func made(_ path: String) { lock.withLock { paths.append(path) } }

        /// Whether `path` is to be removed.
        func holds(_ path: String) -> Bool { lock.withLock { paths.contains(path) } }

        /// Removes every directory made so far, unless `keep` (`SO_TEST_KEEP_TMP=1`).
        func removeAll(keep: Bool = ProcessInfo.processInfo.environment["SO_TEST_KEEP_TMP"] == "1") {
            guard !keep else { return }
            let all = lock.withLock {
                defer { paths = [] }
                return paths
            }
            for path in all { try? LocalFileSystem().removeTree(path) }
        }
    }
}
