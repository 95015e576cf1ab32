import Foundation
import SoBasics

/// `egress:` — when present, the namespace denies all traffic except within itself, DNS, and egress
/// to these hosts (resolved to addresses at start) or CIDRs, on `egress-ports` (default 443, 22, 80).
public struct EgressPolicy: Sendable, Equatable {
    /// As written: host names, CIDRs, URLs (`https://host/…`, `git@host:…`) or `${CONFIG_NAME}` holding one.
    public var entries: [String] = []
    public var ports: [Int] = [443, 22, 80]
    /// `egress-proxy: SERVICE`: the compose service (in a pod of its own) that proxies HTTP(S) to the listed
    /// hosts by name; its pods may reach any address on the allowed ports, the others go through it.
    public var proxy: String?
    public init() {}

    /// Host names and CIDRs, with `${NAME}` expanded from the deployment's config and URLs reduced to
    /// their host; an entry that expands to nothing is dropped.
    public func targets(config: [String: String]) -> (hosts: [String], cidrs: [String]) {
        var hosts: [String] = []
        var cidrs: [String] = []
        for raw in entries {
            guard let t = Self.target(Self.expand(raw, config: config)) else { continue }
            if SpecSections.isCIDR(t) {
                let c = t.contains("/") ? t : t + (t.contains(":") ? "/128" : "/32")
                if !cidrs.contains(c) { cidrs.append(c) }
            } else if !hosts.contains(t) {
                hosts.append(t)
            }
        }
        return (hosts, cidrs)
    }

    /// The ports URLs name beyond `ports`, by target (host or CIDR, as `targets` gives them): a URL's own
    /// `:port`, else its scheme's (`git://` 9418, `ssh://` 22, `http://` 80, `https://` 443).
    public func urlPorts(config: [String: String]) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for raw in entries {
            let v = Self.expand(raw, config: config).trimmedSpaces
            guard let scheme = v.range(of: "://"), let t = Self.target(v) else { continue }
            let key = SpecSections.isCIDR(t) && !t.contains("/") ? t + (t.contains(":") ? "/128" : "/32") : t
            var authority = String(v[scheme.upperBound...].prefix { $0 != "/" })
            if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
            let explicit =
                authority.hasPrefix("[")
                ? authority.split(separator: "]").dropFirst().first.flatMap { Int($0.dropFirst()) }
                : authority.split(separator: ":").dropFirst().first.flatMap { Int($0) }
            let defaults = ["git": 9418, "ssh": 22, "git+ssh": 22, "http": 80, "https": 443]
            guard let port = explicit ?? defaults[v[..<scheme.lowerBound].lowercased()], (1...65535).contains(port),
                !ports.contains(port)
            else { continue }
            if !(out[key] ?? []).contains(port) { out[key, default: []].append(port) }
        }
        return out
    }

    /// `${NAME}` replaced by the deployment's config value, or nothing; as in compose, `${NAME:-WORD}` gives WORD
    /// when NAME is empty or unset (`${NAME-WORD}`: unset) and `${NAME:+WORD}` gives WORD only when NAME is set and
    /// not empty (`${NAME+WORD}`: set), WORD itself expanded: an agent's entry
    /// `${CLAUDE_CODE_USE_BEDROCK:+bedrock-runtime.${AWS_REGION:-us-east-1}.amazonaws.com}` is a host only when the
    /// switch is on. Text that does not close is kept as written.
    static func expand(_ raw: String, config: [String: String]) -> String {
        var out = ""
        var rest = Substring(raw)
        while let open = rest.range(of: "${") {
            out += rest[..<open.lowerBound]
            // The brace that closes this one, past any nested `${…}`.
            var depth = 1
            var i = open.upperBound
            while i < rest.endIndex, depth > 0 {
                if rest[i] == "}" {
                    depth -= 1
                } else if rest[i] == "$", rest.index(after: i) < rest.endIndex, rest[rest.index(after: i)] == "{" {
                    depth += 1
                    i = rest.index(after: i)
                }
                if depth > 0 { i = rest.index(after: i) }
            }
            guard depth == 0 else { return out + rest[open.lowerBound...] }
            out += substitute(rest[open.upperBound..<i], config: config)
            rest = rest[rest.index(after: i)...]
        }
        return out + rest
    }

    /// The inside of one `${…}`: a name, then nothing or one of `:-`, `-`, `:+`, `+` and a word.
    private static func substitute(_ inner: Substring, config: [String: String]) -> String {
        let name = inner.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        let value = config[String(name)]
        let op = inner[name.endIndex...]
        for (sign, whenEmpty) in [(":-", true), ("-", false)] where op.hasPrefix(sign) {
            let word = String(op.dropFirst(sign.count))
            let missing = whenEmpty ? (value ?? "").isEmpty : value == nil
            return missing ? expand(word, config: config) : value ?? ""
        }
        for (sign, whenEmpty) in [(":+", true), ("+", false)] where op.hasPrefix(sign) {
            let word = String(op.dropFirst(sign.count))
            let present = whenEmpty ? !(value ?? "").isEmpty : value != nil
            return present ? expand(word, config: config) : ""
        }
        return value ?? ""
    }

    /// `https://user@host:443/path` → host; `git@host:org/repo` → host; a host or CIDR as is.
    static func target(_ value: String) -> String? {
        var v = value.trimmedSpaces
        if v.isEmpty { return nil }
        if let scheme = v.range(of: "://") {
            v = String(v[scheme.upperBound...])
        } else if v.contains("@"), let colon = v.firstIndex(of: ":"), v.firstIndex(of: "/").map({ $0 > colon }) ?? true
        {
            v = String(v[..<colon])
        }
        if SpecSections.isCIDR(v) { return v }
        if let slash = v.firstIndex(of: "/") { v = String(v[..<slash]) }
        if let at = v.lastIndex(of: "@") { v = String(v[v.index(after: at)...]) }
        if v.hasPrefix("["), let close = v.firstIndex(of: "]") {
            return String(v[v.index(after: v.startIndex)..<close]).lowercased()
        }  // [IPv6]:port
        if let colon = v.firstIndex(of: ":") { v = String(v[..<colon]) }
        return v.isEmpty ? nil : v.lowercased()
    }

    /// An entry is acceptable when it is a CIDR, a host, a URL or refers to config.
    static func valid(_ v: String) -> Bool {
        if v.contains("${") { return true }
        guard let t = target(v) else { return false }
        return SpecSections.isCIDR(t) || SpecSections.isHostName(t)
    }
}
