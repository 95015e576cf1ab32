import Foundation

/// Lexical path helpers over plain strings (no file system access).
public enum Path {
    public static func join(_ parts: String...) -> String { join(parts) }

    public static func join(_ parts: [String]) -> String {
        var out = ""
        for p in parts where !p.isEmpty {
            if p.hasPrefix("/") {
                out = p
                continue
            }
            if out.isEmpty || out.hasSuffix("/") { out += p } else { out += "/" + p }
        }
        return out
    }

    /// Resolves `.` and `..` lexically; keeps a leading `/`. `..` above the root stays at the root.
    public static func normalize(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var stack: [Substring] = []
        for comp in path.split(separator: "/", omittingEmptySubsequences: true) {
            if comp == "." { continue }
            if comp == ".." {
                if let last = stack.last, last != ".." { stack.removeLast() } else if !absolute { stack.append("..") }
                continue
            }
            stack.append(comp)
        }
        let body = stack.joined(separator: "/")
        if absolute { return "/" + body }
        return body.isEmpty ? "." : body
    }

    /// `path` made absolute against `base` (already absolute) and normalized.
    public static func absolute(_ path: String, relativeTo base: String) -> String {
        normalize(path.hasPrefix("/") ? path : join(base, path))
    }

    public static func dirname(_ path: String) -> String {
        let n = normalize(path)
        guard let idx = n.lastIndex(of: "/") else { return "." }
        if idx == n.startIndex { return "/" }
        return String(n[..<idx])
    }

    public static func basename(_ path: String) -> String {
        let n = normalize(path)
        if n == "/" { return "/" }
        guard let idx = n.lastIndex(of: "/") else { return n }
        return String(n[n.index(after: idx)...])
    }

    /// True when `path` is `root` or lies beneath it (both normalized, lexically).
    public static func isWithin(_ path: String, _ root: String) -> Bool {
        let p = normalize(path)
        let r = normalize(root)
        if p == r { return true }
        return p.hasPrefix(r == "/" ? "/" : r + "/")
    }

    /// `path` relative to `root`, when within it.
    public static func relative(_ path: String, to root: String) -> String? {
        let p = normalize(path)
        let r = normalize(root)
        if p == r { return "." }
        let prefix = r == "/" ? "/" : r + "/"
        guard p.hasPrefix(prefix) else { return nil }
        return String(p.dropFirst(prefix.count))
    }

    /// `path` relative to `root`, climbing with `..` when it is outside (`/a/x` from `/a/b` is `../x`).
    public static func climbing(_ path: String, from root: String) -> String {
        let p = normalize(path).split(separator: "/")
        let r = normalize(root).split(separator: "/")
        var i = 0
        while i < p.count && i < r.count && p[i] == r[i] { i += 1 }
        let parts = Array(repeating: "..", count: r.count - i) + p[i...].map(String.init)
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }

    public static func expandTilde(_ path: String, home: String) -> String {
        if path == "~" { return home }
        if path.hasPrefix("~/") { return join(home, String(path.dropFirst(2))) }
        return path
    }
}
