import Foundation
import SoBasics

/// `base` where content outside `roots` cannot be read (a listing or a read throws `Outside`); what exists and
/// its kind still answer (the loader asks before it reads). Used only to load a directory for `RecordTrust`.
public struct ConfinedFileSystem: FileSystem {
    public struct Outside: Error { public var path: String }
    public let base: FileSystem
    public let roots: [String]

    public init(base: FileSystem, roots: [String]) {
        self.base = base
        self.roots = roots
    }

    func check(_ path: String) throws {
        let real = base.realpath(path)
        guard roots.contains(where: { Path.isWithin(real, $0) }) else { throw Outside(path: path) }
    }
    public func kind(_ path: String) -> FileKind? { base.kind(path) }
    public func readData(_ path: String) throws -> Data {
        try check(path)
        return try base.readData(path)
    }
    public func write(_ data: Data, to path: String) throws { throw Outside(path: path) }
    public func list(_ directory: String) throws -> [String] {
        try check(directory)
        return try base.list(directory)
    }
    public func createDirectory(_ path: String) throws { throw Outside(path: path) }
    public func remove(_ path: String) throws { throw Outside(path: path) }
    public func removeTree(_ path: String) throws { throw Outside(path: path) }
    public func move(_ from: String, to: String) throws { throw Outside(path: to) }
    public func replace(_ path: String, with from: String) throws { throw Outside(path: path) }
    public func size(_ path: String) throws -> UInt64 {
        try check(path)
        return try base.size(path)
    }
    public func realpath(_ path: String) -> String { base.realpath(path) }
    public func isExecutable(_ path: String) -> Bool { base.isExecutable(path) }
    public func setExecutable(_ path: String, _ executable: Bool) throws { throw Outside(path: path) }
    public var currentDirectory: String { base.currentDirectory }
    public var homeDirectory: String { base.homeDirectory }
    public func temporaryDirectory(beside path: String, prefix: String) throws -> String { throw Outside(path: path) }
    public func modificationDate(_ path: String) -> Date? { base.modificationDate(path) }
}
