import Foundation
import SoBasics
import Yams

/// Several compose files as docker compose reads them — `-f a -f b` merged with compose's rules
/// (`!reset` drops a value, `!override` replaces instead of merging), top-level `include:`, and
/// service `extends:` — flattened into one document whose relative paths resolve from the first
/// file's directory. Pure apart from reading the files through the given FileSystem.
public enum ComposeFlatten {
    /// A YAML value with the tag it was written with (`!reset`, `!override`).
    indirect enum Value: Equatable {
        case scalar(String, quoted: Bool, tag: String?)
        case map([(String, Value)], tag: String?)
        case list([Value], tag: String?)

        static func == (a: Value, b: Value) -> Bool { a.yvalue == b.yvalue && a.tag == b.tag }

        var tag: String? {
            switch self {
            case .scalar(_, _, let t), .map(_, let t), .list(_, let t): return t
            }
        }
        var pairs: [(String, Value)]? {
            if case .map(let p, _) = self { return p }
            return nil
        }
        var items: [Value]? {
            if case .list(let l, _) = self { return l }
            return nil
        }
        var text: String? {
            if case .scalar(let s, _, _) = self { return s }
            return nil
        }

        /// The value for the YAML writer: plain ints and bools keep their type, all else is text.
        var yvalue: YValue {
            switch self {
            case .scalar(let s, let quoted, _):
                if !quoted {
                    if ["", "~", "null", "Null", "NULL"].contains(s) { return .null }
                    if let i = Int(s) { return .int(i) }
                    if s == "true" || s == "false" { return .bool(s == "true") }
                }
                return .string(s)
            case .map(let p, _): return .map(p.map { ($0.0, $0.1.yvalue) })
            case .list(let l, _): return .list(l.map(\.yvalue))
            }
        }
    }

    /// True when the files need flattening (several files, includes or extends); one plain file is copied as it is.
    public static func needed(_ paths: [String], fs: FileSystem) throws -> Bool {
        if paths.count > 1 { return true }
        let doc = try read(paths[0], fs: fs)
        if doc.pairs?.contains(where: { $0.0 == "include" }) == true { return true }
        let services = doc.pairs?.first { $0.0 == "services" }?.1.pairs ?? []
        return services.contains { $0.1.pairs?.contains { $0.0 == "extends" } == true }
    }

    /// The merged document as YAML text.
    public static func flatten(_ paths: [String], fs: FileSystem) throws -> String {
        precondition(!paths.isEmpty)
        let base = Path.dirname(paths[0])
        var merged: Value = .map([], tag: nil)
        for p in paths { merged = merge(merged, try load(p, relativeTo: base, fs: fs, depth: 0)) }
        return "# flattened by so from: \(paths.map { Path.relative($0, to: base) ?? $0 }.joined(separator: ", "))\n"
            + strip(merged).yvalue.yaml()
    }

    /// One file with its includes and extends resolved, paths rebased onto `base`.
    static func load(_ path: String, relativeTo base: String, fs: FileSystem, depth: Int) throws -> Value {
        guard depth < 10 else {
            throw SoError("compose include/extends nest more than 10 deep at \(path)", hint: "check for a cycle")
        }
        var doc = try read(path, fs: fs)
        let dir = Path.dirname(path)
        var result: Value = .map([], tag: nil)
        // include: each entry's files are loaded first; the including file wins on conflicts.
        if let pairs = doc.pairs, let inc = pairs.first(where: { $0.0 == "include" })?.1 {
            for entry in inc.items ?? [] {
                let files: [String]
                if let t = entry.text {
                    files = [t]
                } else {
                    let p = entry.pairs?.first { $0.0 == "path" }?.1
                    files = p?.text.map { [$0] } ?? p?.items?.compactMap(\.text) ?? []
                }
                guard !files.isEmpty else {
                    throw SoError(
                        "an include: entry of \(path) names no file",
                        hint: "write '- other.yaml' or '- path: [a.yaml, b.yaml]'")
                }
                for f in files {
                    let abs = Path.absolute(f, relativeTo: dir)
                    guard fs.isFile(abs) else {
                        throw SoError(
                            "included compose file not found: \(abs)",
                            hint: "fix the include: path (relative to \(path))", at: SourceLocation(file: path))
                    }
                    result = merge(result, try load(abs, relativeTo: base, fs: fs, depth: depth + 1))
                }
            }
            doc = .map(pairs.filter { $0.0 != "include" }, tag: nil)
        }
        doc = rebase(doc, from: dir, to: base)
        // extends: the named service (of this file or another) is the base the service merges over.
        if let pairs = doc.pairs, var services = pairs.first(where: { $0.0 == "services" })?.1.pairs {
            for i in services.indices {
                services[i].1 = try resolveExtends(
                    services[i].0, services[i].1, services: services, file: path, base: base, fs: fs, depth: depth)
            }
            doc = .map(pairs.map { $0.0 == "services" ? ("services", .map(services, tag: nil)) : $0 }, tag: nil)
        }
        return merge(result, doc)
    }

    static func resolveExtends(
        _ name: String, _ svc: Value, services: [(String, Value)], file: String, base: String, fs: FileSystem,
        depth: Int
    ) throws -> Value {
        guard let pairs = svc.pairs, let ext = pairs.first(where: { $0.0 == "extends" })?.1 else { return svc }
        let target = ext.text ?? ext.pairs?.first { $0.0 == "service" }?.1.text
        guard let target else {
            throw SoError(
                "extends of service '\(name)' names no service",
                hint: "write 'extends: {service: NAME, file: other.yaml}'",
                at: SourceLocation(file: file))
        }
        var parent: Value
        if let other = ext.pairs?.first(where: { $0.0 == "file" })?.1.text {
            let abs = Path.absolute(other, relativeTo: Path.dirname(file))
            guard fs.isFile(abs) else {
                throw SoError(
                    "extends file not found: \(abs)", hint: "fix extends.file of service '\(name)'",
                    at: SourceLocation(file: file))
            }
            let otherDoc = try load(abs, relativeTo: base, fs: fs, depth: depth + 1)
            guard
                let p = otherDoc.pairs?.first(where: { $0.0 == "services" })?.1.pairs?.first(where: { $0.0 == target })?
                    .1
            else {
                throw SoError(
                    "service '\(name)' extends '\(target)', which \(abs) does not define",
                    hint: "check the service name",
                    at: SourceLocation(file: file))
            }
            parent = p
        } else {
            guard target != name, let p = services.first(where: { $0.0 == target })?.1 else {
                throw SoError(
                    "service '\(name)' extends '\(target)', which this file does not define",
                    hint: "check the service name, or add extends.file",
                    at: SourceLocation(file: file))
            }
            parent = try resolveExtends(target, p, services: services, file: file, base: base, fs: fs, depth: depth + 1)
        }
        // depends_on of the parent is not inherited (compose's rule).
        parent = .map((parent.pairs ?? []).filter { $0.0 != "depends_on" }, tag: nil)
        return merge(parent, .map(pairs.filter { $0.0 != "extends" }, tag: nil))
    }

    static func read(_ path: String, fs: FileSystem) throws -> Value {
        guard let root = try YAMLFile.load(path, fs: fs, what: "compose file") else { return .map([], tag: nil) }
        return try convert(ComposeLayout.normalize(root).root)
    }

    static func convert(_ n: YNode) throws -> Value {
        let tag = customTag(n.node)
        if n.isMapping { return .map(try n.entries("value").map { ($0.key, try convert($0.value)) }, tag: tag) }
        if n.isSequence { return .list(try n.sequence("value").map(convert), tag: tag) }
        if n.isNull { return .scalar("", quoted: false, tag: tag) }
        return .scalar(try n.string("value"), quoted: n.isQuoted, tag: tag)
    }

    static func customTag(_ n: Node) -> String? {
        let raw: String
        switch n {
        case .scalar(let s): raw = s.tag.description
        case .mapping(let m): raw = m.tag.description
        case .sequence(let q): raw = q.tag.description
        case .alias: return nil
        }
        return raw == "!reset" || raw == "!override" ? raw : nil
    }

    // MARK: Merging (compose-spec merge rules)

    /// Keys whose sequences an override replaces rather than extends.
    static let replacedSequences: Set<String> = ["command", "entrypoint", "test"]
    /// Sequences merged by a key of each item (short or long form).
    static func identity(_ key: String, _ item: Value) -> String? {
        switch key {
        case "volumes":
            if let t = item.text {
                let parts = t.split(separator: ":")
                return parts.count > 1 ? String(parts[1]) : t
            }
            return item.pairs?.first { $0.0 == "target" }?.1.text
        case "secrets", "configs":
            return item.text ?? item.pairs?.first { $0.0 == "target" }?.1.text
                ?? item.pairs?.first { $0.0 == "source" }?.1.text
        case "environment", "labels", "extra_hosts", "sysctls":
            return item.text.map { t in String(t.split(separator: "=", maxSplits: 1).first ?? Substring(t)) }
        default: return nil
        }
    }

    static func merge(_ base: Value, _ over: Value, key: String = "") -> Value {
        if over.tag == "!override" || over.tag == "!reset" { return over }
        switch (base, over) {
        case (.map(let b, _), .map(let o, _)):
            var out = b
            for (k, v) in o {
                if let i = out.firstIndex(where: { $0.0 == k }) {
                    out[i].1 = merge(out[i].1, v, key: k)
                } else {
                    out.append((k, v))
                }
            }
            return .map(out, tag: nil)
        case (.list(let b, _), .list(let o, _)) where !replacedSequences.contains(key):
            var out = b
            for item in o {
                if let id = identity(key, item), let i = out.firstIndex(where: { identity(key, $0) == id }) {
                    out[i] = item
                } else if !out.contains(item) {
                    out.append(item)
                }
            }
            return .list(out, tag: nil)
        case (.list(let b, _), .map(let o, let t)) where ["environment", "labels"].contains(key):
            return merge(.map(b.compactMap { kv($0) }, tag: nil), .map(o, tag: t), key: key)
        case (.map(let b, _), .list(let o, _)) where ["environment", "labels"].contains(key):
            return merge(.map(b, tag: nil), .map(o.compactMap { kv($0) }, tag: nil), key: key)
        default:
            return over
        }
    }

    /// `KEY=value` → (KEY, value); `KEY` → (KEY, null).
    static func kv(_ v: Value) -> (String, Value)? {
        guard let t = v.text else { return nil }
        let parts = t.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (
            String(parts[0]),
            parts.count > 1 ? .scalar(String(parts[1]), quoted: true, tag: nil) : .scalar("", quoted: false, tag: nil)
        )
    }

    /// `!reset` values are removed; tags are dropped.
    static func strip(_ v: Value) -> Value {
        switch v {
        case .scalar(let s, let q, _): return .scalar(s, quoted: q, tag: nil)
        case .map(let p, _): return .map(p.filter { $0.1.tag != "!reset" }.map { ($0.0, strip($0.1)) }, tag: nil)
        case .list(let l, _): return .list(l.filter { $0.tag != "!reset" }.map(strip), tag: nil)
        }
    }

    // MARK: Paths

    /// Where a path sits in a compose file.
    public enum PathKind: Sendable { case bind, build, envFile, secretFile, configFile }

    /// Rewrites the relative paths of a file from another directory so they resolve from `base`.
    static func rebase(_ doc: Value, from dir: String, to base: String) -> Value {
        guard dir != base else { return doc }
        return mapPaths(doc) { _, p in
            let r = Path.climbing(Path.absolute(p, relativeTo: dir), from: base)
            return r.hasPrefix(".") ? r : "./" + r
        }
    }

    /// A compose document (YAML text) with every relative path passed through `transform`.
    public static func rewritePaths(_ text: String, file: String, _ transform: (PathKind, String) throws -> String)
        throws -> String
    {
        guard let root = try YAMLFile.parse(text, file: file) else { return text }
        return strip(try mapPaths(try convert(root), transform)).yvalue.yaml()
    }

    /// What a path of a compose file is passed through: its kind and its text in, the new text out.
    typealias PathTransform = (PathKind, String) throws -> String

    static func mapPaths(_ doc: Value, _ transform: PathTransform) rethrows -> Value {
        guard let top = doc.pairs else { return doc }
        return .map(
            try top.map { k, v -> (String, Value) in
                switch k {
                case "services":
                    return (k, .map(try (v.pairs ?? []).map { ($0.0, try servicePaths($0.1, transform)) }, tag: v.tag))
                case "secrets", "configs":
                    return (k, try filePaths(v, kind: k == "secrets" ? .secretFile : .configFile, transform))
                default: return (k, v)
                }
            }, tag: doc.tag)
    }

    /// A relative path passed through `transform`; an absolute, home (`~`) or URL one as it is.
    static func fixPath(_ kind: PathKind, _ p: String, _ transform: PathTransform) rethrows -> String {
        guard !p.hasPrefix("/"), !p.hasPrefix("~"), !p.contains("://") else { return p }
        return try transform(kind, p)
    }

    /// A short-syntax volume (`source:target[:mode]`) with a relative source passed through `transform`.
    static func fixBind(_ s: String, _ transform: PathTransform) rethrows -> String {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, parts[0].hasPrefix(".") || !parts[0].hasPrefix("/") && parts[0].contains("/") else {
            return s
        }
        return ([try fixPath(.bind, parts[0], transform)] + parts.dropFirst()).joined(separator: ":")
    }

    /// A quoted scalar without a tag.
    static func quoted(_ s: String) -> Value { .scalar(s, quoted: true, tag: nil) }

    /// A service with the paths of its `build:`, `env_file:` and `volumes:` passed through `transform`.
    static func servicePaths(_ svc: Value, _ transform: PathTransform) rethrows -> Value {
        guard let pairs = svc.pairs else { return svc }
        return .map(
            try pairs.map { k, v -> (String, Value) in
                switch k {
                case "build": return (k, try buildPaths(v, transform))
                case "env_file": return (k, try envFilePaths(v, transform))
                case "volumes": return (k, try volumePaths(v, transform))
                default: return (k, v)
                }
            }, tag: svc.tag)
    }

    /// A service's `build:` (a path, or a map with `context:`) with its context passed through `transform`.
    static func buildPaths(_ v: Value, _ transform: PathTransform) rethrows -> Value {
        if let t = v.text { return quoted(try fixPath(.build, t, transform)) }
        return .map(
            try (v.pairs ?? []).map {
                $0.0 == "context" ? ($0.0, quoted(try fixPath(.build, $0.1.text ?? ".", transform))) : $0
            }, tag: v.tag)
    }

    /// A service's `env_file:` (a path, or a list of paths and maps with `path:`) with each path passed through
    /// `transform`.
    static func envFilePaths(_ v: Value, _ transform: PathTransform) rethrows -> Value {
        if let t = v.text { return quoted(try fixPath(.envFile, t, transform)) }
        return .list(
            try (v.items ?? []).map { i in
                if let t = i.text { return quoted(try fixPath(.envFile, t, transform)) }
                return .map(
                    try (i.pairs ?? []).map {
                        $0.0 == "path" ? ($0.0, quoted(try fixPath(.envFile, $0.1.text ?? "", transform))) : $0
                    }, tag: nil)
            }, tag: v.tag)
    }

    /// A service's `volumes:` with each relative bind source (short or long syntax) passed through `transform`.
    static func volumePaths(_ v: Value, _ transform: PathTransform) rethrows -> Value {
        .list(
            try (v.items ?? []).map { i in
                if let t = i.text { return quoted(try fixBind(t, transform)) }
                return .map(
                    try (i.pairs ?? []).map { p in
                        guard p.0 == "source", let t = p.1.text, t.hasPrefix(".") else { return p }
                        return (p.0, quoted(try fixPath(.bind, t, transform)))
                    }, tag: i.tag)
            }, tag: v.tag)
    }

    /// Top-level `secrets:` or `configs:` with each definition's `file:` passed through `transform` as `kind`.
    static func filePaths(_ v: Value, kind: PathKind, _ transform: PathTransform) rethrows -> Value {
        .map(
            try (v.pairs ?? []).map { name, def in
                (
                    name,
                    .map(
                        try (def.pairs ?? []).map {
                            $0.0 == "file" ? ($0.0, quoted(try fixPath(kind, $0.1.text ?? "", transform))) : $0
                        }, tag: def.tag)
                )
            }, tag: v.tag)
    }
}
