import Foundation
import SoBasics

/// A file system held in memory: files, directories and symlinks under absolute paths. Parent directories of
/// what a test adds are made implicitly; `realpath` follows the symlinks a test added (as /proc/self/exe resolves).
public final class MemoryFileSystem: FileSystem, @unchecked Sendable {
    private enum Node {
        case file(Data, executable: Bool)
        case directory
        case symlink(String)
    }
    private var nodes: [String: Node] = ["/": .directory]
    private let lock = NSLock()
    public let currentDirectory: String
    public let homeDirectory: String

    public init(currentDirectory: String = "/", homeDirectory: String = "/home/user") {
        self.currentDirectory = currentDirectory
        self.homeDirectory = homeDirectory
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func key(_ path: String) -> String { Path.normalize(Path.absolute(path, relativeTo: currentDirectory)) }

    private func makeParents(_ path: String) {
        var dir = Path.dirname(path)
        while nodes[dir] == nil {
            nodes[dir] = .directory
            if dir == "/" { break }
            dir = Path.dirname(dir)
        }
    }

    /// Adds a file (and its parent directories).
    public func addFile(_ path: String, _ text: String = "", executable: Bool = false) {
        locked {
            let k = key(path)
            makeParents(k)
            nodes[k] = .file(Data(text.utf8), executable: executable)
        }
    }

    /// Adds a symlink at `path` pointing to `target` (absolute, or relative to the link's directory).
    public func addSymlink(_ path: String, to target: String) {
        locked {
            let k = key(path)
            makeParents(k)
            nodes[k] = .symlink(target)
        }
    }

    public func kind(_ path: String) -> FileKind? {
        locked {
            switch nodes[key(path)] {
            case .file?: return .file
            case .directory?: return .directory
            case .symlink?: return .symlink
            case nil: return nil
            }
        }
    }

    public func readData(_ path: String) throws -> Data {
        try locked {
            guard case .file(let data, _)? = nodes[resolve(key(path))] else { throw SoError("no such file: \(path)") }
            return data
        }
    }

    public func write(_ data: Data, to path: String) throws {
        locked {
            let k = key(path)
            makeParents(k)
            nodes[k] = .file(data, executable: false)
        }
    }

    public func list(_ directory: String) throws -> [String] {
        try locked {
            let dir = resolve(key(directory))
            guard case .directory? = nodes[dir] else { throw SoError("not a directory: \(directory)") }
            return nodes.keys.filter { $0 != dir && Path.dirname($0) == dir }.map(Path.basename).sorted()
        }
    }

    public func createDirectory(_ path: String) throws {
        locked {
            let k = key(path)
            makeParents(k)
            if nodes[k] == nil { nodes[k] = .directory }
        }
    }

    public func remove(_ path: String) throws {
        try locked {
            let k = key(path)
            if nodes.keys.contains(where: { $0.hasPrefix(k == "/" ? "/" : k + "/") }) {
                throw SoError("cannot remove \(path): the directory is not empty", hint: "check permissions")
            }
            nodes[k] = nil
        }
    }

    public func removeTree(_ path: String) throws {
        locked {
            let k = key(path)
            for p in nodes.keys where p == k || p.hasPrefix(k == "/" ? "/" : k + "/") { nodes[p] = nil }
        }
    }

    public func move(_ from: String, to: String) throws {
        try locked {
            let f = key(from)
            let t = key(to)
            guard nodes[t] == nil else { throw SoError("\(to) exists") }
            guard nodes[f] != nil else { throw SoError("no such file: \(from)") }
            makeParents(t)
            for p in nodes.keys where p == f || p.hasPrefix(f + "/") {
                nodes[t + p.dropFirst(f.count)] = nodes[p]
                nodes[p] = nil
            }
        }
    }

    public func replace(_ path: String, with from: String) throws {
        try locked {
            let f = key(from)
            let t = key(path)
            if case .directory? = nodes[t] { throw SoError("\(path) is a directory") }
            guard let node = nodes[f] else { throw SoError("no such file: \(from)") }
            makeParents(t)
            nodes[t] = node
            nodes[f] = nil
        }
    }

    /// The in-memory files carry no times.
    public func modificationDate(_ path: String) -> Date? { exists(path) ? Date(timeIntervalSince1970: 0) : nil }

    public func size(_ path: String) throws -> UInt64 { UInt64(try readData(path).count) }

    public func realpath(_ path: String) -> String { locked { resolve(key(path)) } }

    /// Follows symlinks in every component (at most 40, as the kernel does).
    private func resolve(_ path: String) -> String {
        var done = "/"
        var rest = path.split(separator: "/").map(String.init)
        var hops = 0
        while !rest.isEmpty {
            let next = Path.join(done, rest.removeFirst())
            if case .symlink(let target)? = nodes[next], hops < 40 {
                hops += 1
                let absolute = Path.normalize(Path.absolute(target, relativeTo: done))
                rest = absolute.split(separator: "/").map(String.init) + rest
                done = "/"
            } else {
                done = next
            }
        }
        return done
    }

    public func isExecutable(_ path: String) -> Bool {
        locked {
            if case .file(_, let x)? = nodes[resolve(key(path))] { return x }
            return false
        }
    }

    public func setExecutable(_ path: String, _ executable: Bool) throws {
        try locked {
            let k = resolve(key(path))
            guard case .file(let data, _)? = nodes[k] else { throw SoError("no such file: \(path)") }
            nodes[k] = .file(data, executable: executable)
        }
    }

    public func temporaryDirectory(beside path: String, prefix: String) throws -> String {
        try locked {
            var n = 0
            while nodes[key(Path.join(Path.dirname(path), ".\(prefix).\(n)"))] != nil { n += 1 }
            let dir = key(Path.join(Path.dirname(path), ".\(prefix).\(n)"))
            makeParents(dir)
            nodes[dir] = .directory
            return dir
        }
    }
}
