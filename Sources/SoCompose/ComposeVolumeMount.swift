import Foundation
import SoBasics

public struct ComposeVolumeMount: Sendable, Equatable {
    public enum Kind: String, Sendable { case volume, bind, tmpfs, npipe, cluster }
    public var kind: Kind
    /// Named volume name or host path as written (nil for anonymous volumes and tmpfs).
    public var source: String?
    public var target: String
    public var readOnly: Bool
    /// Options after the second colon in short syntax (`ro`, `rw`, `z` …), joined by commas.
    public var options: String?
    public var raw: String
    public var line: Int?
    /// The service whose mount this is, when `volumes_from` brought it (nil: the service's own).
    public var inheritedFrom: String?
    public init(
        kind: Kind, source: String?, target: String, readOnly: Bool = false, options: String? = nil, raw: String,
        line: Int? = nil
    ) {
        self.kind = kind
        self.source = source
        self.target = target
        self.readOnly = readOnly
        self.options = options
        self.raw = raw
        self.line = line
    }
    /// A host path source: starts with `/`, `.` or `~` (compose's rule for short syntax).
    public var isHostPath: Bool { kind == .bind }
}
