import Foundation
import SoBasics

/// `as`, `as-uid`, `as-groups`, `as-user-extra`: whom every request acts as.
public struct Impersonation: Sendable, Hashable {
    public var user: String
    public var uid: String?
    public var groups: [String]
    public var extra: [String: [String]]
    public init(user: String, uid: String? = nil, groups: [String] = [], extra: [String: [String]] = [:]) {
        self.user = user
        self.uid = uid
        self.groups = groups
        self.extra = extra
    }

    /// The request headers, as client-go sends them (extra keys %-escaped where a header name cannot hold them).
    public var headers: [(String, String)] {
        var out = [("Impersonate-User", user)]
        if let uid { out.append(("Impersonate-Uid", uid)) }
        out += groups.map { ("Impersonate-Group", $0) }
        for key in extra.keys.sorted() {
            out += (extra[key] ?? []).map { ("Impersonate-Extra-" + Self.escapeHeaderKey(key), $0) }
        }
        return out
    }

    static func escapeHeaderKey(_ key: String) -> String {
        let legal = Set("!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        return key.utf8.map { legal.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", Int($0)) }
            .joined()
    }
}
