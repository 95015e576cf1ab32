import Foundation

/// A request's `Cookie` header fields read for one cookie: outside input, read by this function alone (fuzzed, in
/// Fuzz/, beside the form and query reader). Foundation only, so the fuzz package builds it without Hummingbird.
enum CookieHeader {
    /// The value of the first cookie called `name` in `fields` (each `a=1; b=2`), or nil. A part without `=`, a
    /// name that only starts or ends like `name`, and spaces around a part are not it.
    static func value(named name: String, in fields: [String]) -> String? {
        for field in fields {
            for part in field.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == name { return String(kv[1]) }
            }
        }
        return nil
    }
}
