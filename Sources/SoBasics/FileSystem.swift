import Foundation

/// The file system seam. Paths are absolute strings.
public protocol FileSystem: Sendable {
    func kind(_ path: String) -> FileKind?  // nil: nothing there (does not follow a final symlink)
    func readData(_ path: String) throws -> Data
    func write(_ data: Data, to path: String) throws  // creates parent directories
    func list(_ directory: String) throws -> [String]  // entry names, sorted
    func createDirectory(_ path: String) throws  // with intermediates, ok if present
    func remove(_ path: String) throws  // a file, a symlink (not its target) or an empty directory; ok if absent
    /// Recursive. Called only by `removeOwnedTree(_:owner:)`, the one recursive delete, which checks what it removes.
    func removeTree(_ path: String) throws
    func move(_ from: String, to: String) throws  // rename; fails if `to` exists
    func replace(_ path: String, with from: String) throws  // rename `from` over the file `path` in one step (atomic)
    func size(_ path: String) throws -> UInt64
    func realpath(_ path: String) -> String  // symlinks resolved (the path itself if it does not exist)
    func isExecutable(_ path: String) -> Bool
    func setExecutable(_ path: String, _ executable: Bool) throws
    var currentDirectory: String { get }
    var homeDirectory: String { get }
    /// A new hidden directory `.<prefix>.<pid>.XXXXXX` beside `path` (the pid tells a killed run's leftovers).
    func temporaryDirectory(beside path: String, prefix: String) throws -> String
    /// When `path` was last modified (not following a final symlink); nil when absent.
    func modificationDate(_ path: String) -> Date?
}

extension FileSystem {
    public func exists(_ path: String) -> Bool { kind(path) != nil }
    public func isDirectory(_ path: String) -> Bool {
        switch kind(path) {
        case .directory: return true
        case .symlink: return kind(realpath(path)) == .directory
        default: return false
        }
    }
    public func isFile(_ path: String) -> Bool {
        switch kind(path) {
        case .file: return true
        case .symlink: return kind(realpath(path)) == .file
        default: return false
        }
    }

    /// Reads UTF-8 text, refusing files over `limit` bytes with an error naming the file.
    public func readText(_ path: String, limit: UInt64 = 8 * 1024 * 1024, what: String = "file") throws -> String {
        guard isFile(path) else {
            throw SoError("\(what) not found: \(path)", hint: "check the path; it is resolved as written")
        }
        let bytes = try size(path)
        if bytes > limit {
            throw SoError(
                "\(path): \(what) is \(bytes / 1024 / 1024) MiB, over the \(limit / 1024 / 1024) MiB limit",
                hint: "this does not look like a \(what); check the path")
        }
        let data = try readData(path)
        guard let text = String(data: data, encoding: .utf8) else {
            throw SoError("\(path): \(what) is not valid UTF-8 text", hint: "save it as UTF-8")
        }
        return text
    }

    public func writeText(_ text: String, to path: String) throws { try write(Data(text.utf8), to: path) }

    /// Every regular file below `directory`, as paths relative to it, sorted; symlinks reported as such.
    public func walk(_ directory: String) throws -> [(relative: String, kind: FileKind)] {
        var out: [(String, FileKind)] = []
        func visit(_ rel: String) throws {
            let abs = rel.isEmpty ? directory : Path.join(directory, rel)
            for name in try list(abs) {
                let r = rel.isEmpty ? name : rel + "/" + name
                let k = kind(Path.join(directory, r)) ?? .other
                if k == .directory { try visit(r) } else { out.append((r, k)) }
            }
        }
        try visit("")
        return out
    }
}

extension FileSystem {
    /// Removes what killed runs left beside `path`: `.<prefix>.<pid>.XXXXXX` directories whose process no
    /// longer runs, or that are over a day old (the pid may have been reused), and the older pid-less
    /// `.<prefix>.XXXXXX` form once over an hour old. Returns the paths removed.
    @discardableResult
    public func removeStaleTemporaries(beside path: String, prefix: String, isProcessAlive: (Int32) -> Bool, now: Date)
        -> [String]
    {
        let parent = Path.dirname(path)
        guard isDirectory(parent), let names = try? list(parent) else { return [] }
        let head = "." + prefix + "."
        var removed: [String] = []
        for name in names where name.hasPrefix(head) {
            let rest = name.dropFirst(head.count).split(separator: ".", omittingEmptySubsequences: false)
            let p = Path.join(parent, name)
            let age = modificationDate(p).map { now.timeIntervalSince($0) } ?? 0
            let stale: Bool
            if rest.count == 2, let pid = Int32(rest[0]), rest[1].count == 6 {
                stale = !isProcessAlive(pid) || age > 24 * 3600
            } else if rest.count == 1, rest[0].count == 6 {
                stale = age > 3600
            } else {
                continue
            }
            if stale, (try? removeOwnedTree(p, owner: .scratch(prefix: prefix))) != nil { removed.append(p) }
        }
        return removed
    }
}
