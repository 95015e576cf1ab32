import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// What `start --dry-run` would do to one object.
public struct PlannedChange: Sendable, Equatable, Encodable {
    public enum Action: String, Sendable, Encodable { case create, configure, unchanged, delete, keep }
    public var action: Action
    public var kind: String
    public var name: String
    public var namespace: String?
    /// Why, when the object was not checked by the API server (its namespace does not exist yet) or is kept.
    public var note: String?
    /// With `--diff`, for an object that would be configured: each field that would change, as
    /// `kubectl diff` shows it (`- path: old`, `+ path: new`); a Secret's values never appear.
    public var diff: [String]?

    /// `--detailed-exitcode`'s code for a plan that changes something (0: nothing; 1 stays an error).
    public static let exitChanges: Int32 = 2

    /// Whether a plan would change the cluster: something to create, configure or delete (kept and unchanged
    /// objects are not changes).
    public static func changes(_ plan: [PlannedChange]) -> Bool {
        plan.contains { [.create, .configure, .delete].contains($0.action) }
    }

    public var line: String {
        let verb: String
        switch action {
        case .create: verb = "would create"
        case .configure: verb = "would configure"
        case .unchanged: verb = "unchanged"
        case .delete: verb = "would delete"
        case .keep: verb = "would keep"
        }
        return "\(verb) \(kind) \(namespace.map { "\($0)/" } ?? "")\(name)" + (note.map { " (\($0))" } ?? "")
    }
}
