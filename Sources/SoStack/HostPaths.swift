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

/// A relative bind whose source does not exist (docker creates it as an empty directory): `deploy create`
/// makes `data/<volume>` in the deployment directory instead, mounted read-write from the host.
public enum BindDirectory {
    /// `./foundry/workspace` → `host-path-foundry-workspace`.
    public static func volume(for source: String) -> String {
        var s = Substring(source)
        while s.hasPrefix("./") || s.hasPrefix("../") { s = s.drop { $0 == "." }.dropFirst() }
        var out = ""
        for c in s.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber) { out.append(c) } else if !out.hasSuffix("-") && !out.isEmpty { out.append("-") }
        }
        while out.hasSuffix("-") { out.removeLast() }
        var name = "host-path-" + (out.isEmpty ? "dir" : out)
        if name.count > 63 { name = String(name.prefix(63)); while name.hasSuffix("-") { name.removeLast() } }
        return name
    }

    /// Where it lives, relative to the deployment directory.
    public static func path(for source: String) -> String { "data/" + volume(for: source) }
}

/// A compose bind of a host path under the stack's repositories (`$SO_REPO_BASE_DIR`, default `~/cerc`, where
/// `setup-repositories` clones them): laconic-so mounts such a path with no spec entry, and so does `so`.
/// Any other absolute host path still needs the spec's opt-in.
public struct RepoBind: Sendable, Equatable {
    /// Absolute, `~` expanded.
    public var path: String
    public var kind: HostPathKind

    /// The absolute path of `source` (as the compose file writes it) when it lies under `root`.
    public static func path(of source: String, root: String, home: String) -> String? {
        guard source.hasPrefix("/") || source.hasPrefix("~") else { return nil }
        let abs = Path.normalize(Path.expandTilde(source, home: home))
        let base = Path.normalize(root)
        return abs != base && Path.isWithin(abs, base) ? abs : nil
    }
}
