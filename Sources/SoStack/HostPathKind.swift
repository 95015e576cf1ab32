import Foundation
import SoBasics

/// What a host path a deployment mounts is, read through the FileSystem seam when the deployment is
/// loaded: render (pure) picks the hostPath type from it — the kubelet refuses a file or a socket where a
/// directory is expected.
public enum HostPathKind: String, Sendable, Equatable {
    case directory, file, socket
    /// Nothing there yet: made as a directory, as docker does for a missing bind source.
    case missing
    /// A device or a FIFO: mounted without a type check.
    case other

    /// Symlinks are followed (`/var/run/docker.sock` is often one).
    public static func of(_ path: String, fs: FileSystem) -> HostPathKind {
        var kind = fs.kind(path)
        if kind == .symlink { kind = fs.kind(fs.realpath(path)) }
        switch kind {
        case .file: return .file
        case .socket: return .socket
        case .directory: return .directory
        case nil, .symlink: return .missing
        case .other: return .other
        }
    }

    /// The `hostPath.type` for it (nil: no check).
    public var hostPathType: String? {
        switch self {
        case .file: return "File"
        case .socket: return "Socket"
        case .directory, .missing: return "DirectoryOrCreate"
        case .other: return nil
        }
    }
}
