import Foundation
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

/// The fields two versions of an object differ in, one line each, as `kubectl diff` shows them: `- path: old`
/// then `+ path: new` (a field only one side has shows only that side). Paths are dotted, list items
/// `[i]`. A Secret's `data`/`stringData` values are never shown: `~ data.KEY: (secret value changed)`.
enum ObjectDiff {
    /// An object as the server stores it, bookkeeping fields aside (what two versions are compared by).
    static func comparable(_ json: JSON) -> JSON {
        guard case .object(var o) = json else { return json }
        o["status"] = nil
        if case .object(var meta)? = o["metadata"] {
            for k in ["resourceVersion", "generation", "managedFields", "creationTimestamp", "uid"] { meta[k] = nil }
            o["metadata"] = .object(meta)
        }
        return .object(o)
    }

    static func lines(from old: JSON, to new: JSON, secret: Bool) -> [String] {
        var out: [String] = []
        func text(_ v: JSON) -> String { String(decoding: JSONWriter.bytes(v.yValue, .compact), as: UTF8.self) }
        func walk(_ a: JSON?, _ b: JSON?, _ path: String) {
            if a == b { return }
            let top = path.split(separator: ".").first.map(String.init) ?? ""
            if secret && (top == "data" || top == "stringData") && path.contains(".") {
                out.append(a == nil ? "+ \(path): (secret value)" : b == nil ? "- \(path): (secret value)" : "~ \(path): (secret value changed)")
                return
            }
            switch (a, b) {
            case (.object(let x)?, .object(let y)?):
                for k in Set(x.keys).union(y.keys).sorted() { walk(x[k], y[k], path.isEmpty ? k : "\(path).\(k)") }
            case (.array(let x)?, .array(let y)?) where x.count == y.count:
                for i in x.indices { walk(x[i], y[i], "\(path)[\(i)]") }
            default:
                if let a { out.append("- \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(a))") }
                if let b { out.append("+ \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(b))") }
            }
        }
        walk(old, new, "")
        return out
    }
}
