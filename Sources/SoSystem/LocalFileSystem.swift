import Foundation
import SoBasics

/// The real file system, through FileManager.
public struct LocalFileSystem: FileSystem {
    private let workingDirectory: String?
    /// - Parameter currentDirectory: relative paths resolve against this instead of the process's
    ///   working directory (lets tests run in parallel without `chdir`).
    public init(currentDirectory: String? = nil) { workingDirectory = currentDirectory }

    private var fm: FileManager { FileManager.default }

    public func kind(_ path: String) -> FileKind? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        case S_IFSOCK: return .socket
        default: return .other
        }
    }

    public func readData(_ path: String) throws -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw SoError(
                "cannot read \(path): \(Self.reason(error))", hint: "check that the file exists and is readable")
        }
    }

    public func write(_ data: Data, to path: String) throws {
        try createDirectory(Path.dirname(path))
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw SoError(
                "cannot write \(path): \(Self.reason(error))", hint: "check the directory's permissions and free space")
        }
    }

    public func list(_ directory: String) throws -> [String] {
        do { return try fm.contentsOfDirectory(atPath: directory).sorted() } catch {
            throw SoError("cannot list \(directory): \(Self.reason(error))", hint: "check that the directory exists")
        }
    }

    public func createDirectory(_ path: String) throws {
        do { try fm.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw SoError(
                "cannot create directory \(path): \(Self.reason(error))",
                hint: "check the parent directory's permissions")
        }
    }

    public func remove(_ path: String) throws {
        guard let k = kind(path) else { return }
        let failed = k == .directory ? rmdir(path) != 0 : unlink(path) != 0
        if failed {
            let why =
                errno == ENOTEMPTY || errno == EEXIST
                ? "the directory is not empty" : String(cString: strerror(errno)).lowercased()
            throw SoError("cannot remove \(path): \(why)", hint: "check permissions")
        }
    }

    public func removeTree(_ path: String) throws {
        guard kind(path) != nil else { return }
        do { try fm.removeItem(atPath: path) } catch {
            throw SoError("cannot remove \(path): \(Self.reason(error))", hint: "check permissions")
        }
    }

    public func move(_ from: String, to: String) throws {
        if kind(to) != nil { throw SoError("\(to) already exists", hint: "remove it or choose another path") }
        guard rename(from, to) == 0 else {
            throw SoError(
                "cannot rename \(from) to \(to): \(String(cString: strerror(errno)))", hint: "check permissions")
        }
    }

    public func replace(_ path: String, with from: String) throws {
        if kind(path) == .directory { throw SoError("\(path) is a directory", hint: "name a file") }
        guard rename(from, path) == 0 else {
            throw SoError(
                "cannot rename \(from) over \(path): \(String(cString: strerror(errno)))", hint: "check permissions")
        }
    }

    public func size(_ path: String) throws -> UInt64 {
        var st = stat()
        guard stat(path, &st) == 0 else { throw SoError("cannot stat \(path): \(String(cString: strerror(errno)))") }
        return UInt64(st.st_size)
    }

    public func realpath(_ path: String) -> String {
        guard let p = Glibc.realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    public func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 && isFile(path) }

    public func setExecutable(_ path: String, _ executable: Bool) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        let mode = executable ? (st.st_mode | 0o111) : (st.st_mode & ~0o111)
        chmod(path, mode & 0o7777)
    }

    public var currentDirectory: String { workingDirectory ?? fm.currentDirectoryPath }
    public var homeDirectory: String { getenv("HOME").map { String(cString: $0) } ?? NSHomeDirectory() }

    public func temporaryDirectory(beside path: String, prefix: String) throws -> String {
        let parent = Path.dirname(path)
        try createDirectory(parent)
        var template = Array(Path.join(parent, ".\(prefix).\(getpid()).XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buf -> Bool in
            buf.baseAddress.map { mkdtemp($0) != nil } ?? false
        }
        guard made else {
            throw SoError(
                "cannot create a temporary directory in \(parent): \(String(cString: strerror(errno)))",
                hint: "check the directory's permissions")
        }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func modificationDate(_ path: String) -> Date? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code))).lowercased()
        }
        switch ns.code {
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "no such file or directory"
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "permission denied"
        default: return ns.localizedDescription.lowercased()
        }
    }
}
