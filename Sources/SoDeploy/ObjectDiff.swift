import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

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
                out.append(
                    a == nil
                        ? "+ \(path): (secret value)"
                        : b == nil ? "- \(path): (secret value)" : "~ \(path): (secret value changed)")
                return
            }
            switch (a, b) {
            case (.object(let x)?, .object(let y)?):
                for k in Set(x.keys).union(y.keys).sorted() { walk(x[k], y[k], path.isEmpty ? k : "\(path).\(k)") }
            case (.array(let x)?, .array(let y)?) where x.count == y.count:
                for i in x.indices { walk(x[i], y[i], "\(path)[\(i)]") }
            default:
                if let a {
                    out.append(
                        "- \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(a))")
                }
                if let b {
                    out.append(
                        "+ \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(b))")
                }
            }
        }
        walk(old, new, "")
        return out
    }
}
