import Foundation
import SoBasics

/// `base` where content outside `roots` cannot be read (a listing or a read throws `Outside`); what exists and
/// its kind still answer (the loader asks before it reads). Used only to load a directory for `RecordTrust`.
struct ConfinedFileSystem: FileSystem {
    struct Outside: Error { var path: String }
    let base: FileSystem
    let roots: [String]

    func check(_ path: String) throws {
        let real = base.realpath(path)
        guard roots.contains(where: { Path.isWithin(real, $0) }) else { throw Outside(path: path) }
    }
    func kind(_ path: String) -> FileKind? { base.kind(path) }
    func readData(_ path: String) throws -> Data {
        try check(path)
        return try base.readData(path)
    }
    func write(_ data: Data, to path: String) throws { throw Outside(path: path) }
    func list(_ directory: String) throws -> [String] {
        try check(directory)
        return try base.list(directory)
    }
    func createDirectory(_ path: String) throws { throw Outside(path: path) }
    func remove(_ path: String) throws { throw Outside(path: path) }
    func removeTree(_ path: String) throws { throw Outside(path: path) }
    func move(_ from: String, to: String) throws { throw Outside(path: to) }
    func replace(_ path: String, with from: String) throws { throw Outside(path: path) }
    func size(_ path: String) throws -> UInt64 {
        try check(path)
        return try base.size(path)
    }
    func realpath(_ path: String) -> String { base.realpath(path) }
    func isExecutable(_ path: String) -> Bool { base.isExecutable(path) }
    func setExecutable(_ path: String, _ executable: Bool) throws { throw Outside(path: path) }
    var currentDirectory: String { base.currentDirectory }
    var homeDirectory: String { base.homeDirectory }
    func temporaryDirectory(beside path: String, prefix: String) throws -> String { throw Outside(path: path) }
    func modificationDate(_ path: String) -> Date? { base.modificationDate(path) }
}
