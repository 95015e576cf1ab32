import Foundation
import SoBasics

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
