import Foundation
import SoBasics
import SoSystem

/// A scratch directory under the system temp dir, removed by `cleanup()`.
public struct TempDir: Sendable {
    public let path: String
    public init(_ label: String = "so-test") throws {
        let base = NSTemporaryDirectory()
        path = try LocalFileSystem().temporaryDirectory(beside: Path.join(base, "x"), prefix: label)
    }
    public func file(_ rel: String) -> String { Path.join(path, rel) }
    public func write(_ rel: String, _ text: String) throws { try LocalFileSystem().writeText(text, to: file(rel)) }
    public func read(_ rel: String) throws -> String { try LocalFileSystem().readText(file(rel)) }
    public func exists(_ rel: String) -> Bool { LocalFileSystem().exists(file(rel)) }
    public func cleanup() { try? LocalFileSystem().removeTree(path) }
}
