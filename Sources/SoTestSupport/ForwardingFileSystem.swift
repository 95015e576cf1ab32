import Foundation
import SoBasics

/// Every call forwarded to `base`; test file systems override what they watch.
open class ForwardingFileSystem: FileSystem, @unchecked Sendable {
    public let base: FileSystem
    public init(base: FileSystem) { self.base = base }
    open func write(_ data: Data, to path: String) throws { try base.write(data, to: path) }
    open func kind(_ path: String) -> FileKind? { base.kind(path) }
    open func readData(_ path: String) throws -> Data { try base.readData(path) }
    open func list(_ directory: String) throws -> [String] { try base.list(directory) }
    open func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    open func remove(_ path: String) throws { try base.remove(path) }
    open func removeTree(_ path: String) throws { try base.removeTree(path) }
    open func move(_ from: String, to: String) throws { try base.move(from, to: to) }
    open func replace(_ path: String, with from: String) throws { try base.replace(path, with: from) }
    open func size(_ path: String) throws -> UInt64 { try base.size(path) }
    open func realpath(_ path: String) -> String { base.realpath(path) }
    open func isExecutable(_ path: String) -> Bool { base.isExecutable(path) }
    open func setExecutable(_ path: String, _ executable: Bool) throws { try base.setExecutable(path, executable) }
    open var currentDirectory: String { base.currentDirectory }
    open var homeDirectory: String { base.homeDirectory }
    open func temporaryDirectory(beside path: String, prefix: String) throws -> String {
        try base.temporaryDirectory(beside: path, prefix: prefix)
    }
    open func modificationDate(_ path: String) -> Date? { base.modificationDate(path) }
}
