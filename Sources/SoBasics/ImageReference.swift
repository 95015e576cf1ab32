import Foundation

/// Container image references as written (`kindest/node:v1.31.0`, `reg:5000/a/b@sha256:…`).
public enum ImageReference {
    /// Whether `s` can be an image reference: no spaces or shell characters, starts with a letter or digit, and
    /// uses only the characters a reference may hold. The registry decides whether it exists.
    public static func isPlausible(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, NameRules.isAlnum(first), !s.hasSuffix(":"), !s.hasSuffix("/") else {
            return false
        }
        return NameRules.isPlain(s, extra: "._-/:@")
    }

    /// The same image however a container engine spells it: `docker.io/` and `docker.io/library/` dropped,
    /// `latest` when no tag or digest is given; the digest kept apart.
    public static func normalized(_ s: String) -> (name: String, digest: String?) {
        var name = s
        var digest: String?
        if let at = name.firstIndex(of: "@") {
            digest = String(name[name.index(after: at)...])
            name = String(name[..<at])
        }
        for prefix in ["docker.io/library/", "docker.io/", "index.docker.io/library/", "index.docker.io/"]
        where name.hasPrefix(prefix) {
            name = String(name.dropFirst(prefix.count))
            break
        }
        let lastPart = name.split(separator: "/").last.map(String.init) ?? name
        if !lastPart.contains(":") && digest == nil { name += ":latest" }
        return (name, digest)
    }

    /// The reference containerd (and so a kind node) resolves a short one to: `docker.io/` (and `library/`)
    /// added when the first part names no registry, `:latest` when no tag or digest is given.
    public static func qualified(_ s: String) -> String {
        let parts = s.split(separator: "/", maxSplits: 1).map(String.init)
        var name = s
        if parts.count == 1 {
            name = "docker.io/library/" + s
        } else if let first = parts.first, !(first.contains(".") || first.contains(":") || first == "localhost") {
            name = "docker.io/" + s
        }
        let last = name.split(separator: "/").last.map(String.init) ?? name
        if !last.contains(":") && !name.contains("@") { name += ":latest" }
        return name
    }

    /// `reg:5000/a/b:tag` → `reg:5000/a/b` (a colon after the last `/` starts the tag).
    static func repository(_ name: String) -> String {
        let slash = name.lastIndex(of: "/")
        if let colon = name.lastIndex(of: ":"), slash.map({ colon > $0 }) ?? true { return String(name[..<colon]) }
        return name
    }

    /// Whether two references name the same image: equal names, and equal digests where both give one
    /// (kind pins its default images as `kindest/node:v1.31.0@sha256:…`; a spec may leave the digest out).
    public static func same(_ a: String, _ b: String) -> Bool {
        let (x, y) = (normalized(a), normalized(b))
        if let dx = x.digest, let dy = y.digest, dx != dy { return false }
        if x.name == y.name { return true }
        // One given by digest only (`kindest/node@sha256:…`) and the other by tag and the same digest.
        guard x.digest != nil, x.digest == y.digest else { return false }
        return repository(x.name) == repository(y.name)
    }
}
