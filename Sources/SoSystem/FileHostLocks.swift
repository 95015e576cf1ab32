import Foundation
import SoBasics

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `flock(2)` on a file per lock name in a directory (the system's temporary directory): the kernel
/// gives the lock up when its holder exits, however it exits. Waiting polls every quarter second, so
/// no thread blocks.
public struct FileHostLocks: HostLocks {
    public let directory: String
    public init(directory: String = NSTemporaryDirectory()) { self.directory = directory }

    public func holding<T: Sendable>(_ name: String, _ body: (_ waited: Bool) async throws -> T) async throws -> T {
        let path = Path.join(directory, "so-\(name).lock")
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            throw SoError(
                "cannot open the lock file \(path): \(String(cString: strerror(errno)))",
                hint: "check that \(directory) is writable")
        }
        defer { close(fd) }
        var waited = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw SoError(
                    "cannot lock \(path): \(String(cString: strerror(errno)))",
                    hint: "check that \(directory) is writable")
            }
            waited = true
            try await Task.sleep(nanoseconds: 250_000_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try await body(waited)
    }
}
