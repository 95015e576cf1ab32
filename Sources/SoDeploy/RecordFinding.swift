import Foundation

/// One thing a revision would do that the gate refuses: the file and key that say it, and what it does.
public struct RecordFinding: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// It would reach this machine: read a file outside the directory, run a command here.
        case reach
        /// It would run with more privilege than the namespace had (`--accept-privilege` after reading it).
        case privilege
        /// It is not where it was found: another namespace, deployment, cluster (never accepted).
        case place
    }
    public var kind: Kind
    public var file: String
    public var key: String
    public var what: String

    public init(_ kind: Kind, _ file: String, _ key: String, _ what: String) {
        self.kind = kind
        self.file = file
        self.key = key
        self.what = what
    }

    public var description: String { "\(file)\(key.isEmpty ? "" : " " + key) \(what)" }

    /// The file of a finding that no one file says: what the loader itself read outside the directory.
    public static let wholeDirectory = "the directory"

    /// A revision whose deployment.yml or spec.yml does not load here (`RecordReads.identity`): its place cannot be
    /// read, so it is refused as one of another place, with a hint of its own.
    static func unloadable(_ file: String, _ why: String) -> RecordFinding {
        .init(.place, file, "", "does not load: \(why)")
    }
    var isUnloadable: Bool { kind == .place && key.isEmpty && what.hasPrefix("does not load: ") }
}
