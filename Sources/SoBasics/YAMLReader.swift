import Foundation
import Yams

/// Strict reading of YAML files as written by people: every value keeps its file:line, scalars keep
/// their raw text (no YAML 1.1 guessing), duplicate keys and alias bombs are errors, and mappings
/// report unknown keys as warnings with a "did you mean".
public enum YAMLFile {
    /// Largest YAML file `so` reads.
    public static let maxBytes: UInt64 = 4 * 1024 * 1024
    /// Largest number of nodes a document may expand to through aliases.
    public static let maxExpandedNodes = 200_000

    /// Reads and parses `path`; nil when the document is empty (or only comments).
    public static func load(_ path: String, fs: FileSystem, what: String = "YAML file") throws -> YNode? {
        let text = try fs.readText(path, limit: maxBytes, what: what)
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws -> YNode? {
        let node: Node?
        do {
            // No implicit typing (`.basic`): scalars keep their raw text and style, which is all this
            // reader uses; the default resolver would also compile ICU regular expressions on every run.
            node = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw describe(error, file: file)
        } catch {
            throw SoError("\(file): cannot parse YAML: \(error)", hint: "check the file's YAML syntax")
        }
        guard let node else { return nil }
        var count = 0
        try checkExpansion(node, count: &count, file: file)
        return YNode(node, file: file)
    }

    private static func checkExpansion(_ node: Node, count: inout Int, file: String) throws {
        count += 1
        if count > maxExpandedNodes {
            throw SoError("document expands to more than \(maxExpandedNodes) values through aliases",
                          hint: "remove the nested anchors/aliases (this looks like an alias bomb)",
                          at: SourceLocation(file: file, line: node.mark?.line))
        }
        switch node {
        case .mapping(let m): for (k, v) in m { try checkExpansion(k, count: &count, file: file); try checkExpansion(v, count: &count, file: file) }
        case .sequence(let s): for v in s { try checkExpansion(v, count: &count, file: file) }
        default: break
        }
    }

    static func describe(_ error: YamlError, file: String) -> SoError {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _), let .composer(context, problem, mark, _):
            var text = problem
            if let context { text += " (\(context.text))" }
            return SoError("invalid YAML: \(text)", hint: "fix the YAML syntax at that line (indentation, quotes, colons)",
                           at: SourceLocation(file: file, line: mark.line, column: mark.column))
        case let .duplicatedKeysInMapping(duplicates, context):
            return SoError("duplicate key '\(duplicates.joined(separator: "', '"))'",
                           hint: "a key may appear once per mapping; remove or rename the repeated one",
                           at: SourceLocation(file: file, line: context.mark.line, column: context.mark.column))
        case let .reader(problem, _, _, _):
            return SoError("\(file): cannot read YAML: \(problem)", hint: "save the file as UTF-8 text")
        default:
            return SoError("\(file): invalid YAML: \(error)", hint: "check the file's YAML syntax")
        }
    }
}

/// A YAML node plus the file it came from.
public struct YNode: @unchecked Sendable {
    public let node: Node
    public let file: String

    public init(_ node: Node, file: String) {
        self.node = node
        self.file = file
    }

    public var line: Int? { node.mark?.line }
    public var location: SourceLocation { SourceLocation(file: file, line: line) }

    public func error(_ message: String, hint: String? = nil) -> SoError {
        SoError(message, hint: hint, at: location)
    }

    public var isNull: Bool {
        guard case .scalar(let s) = node else { return false }
        return s.style == .plain && ["", "~", "null", "Null", "NULL"].contains(s.string)
    }
    public var isScalar: Bool { if case .scalar = node { return true }; return false }
    public var isMapping: Bool { if case .mapping = node { return true }; return false }
    public var isSequence: Bool { if case .sequence = node { return true }; return false }
    /// True for a scalar written in quotes (so `"80"` and `80` can be told apart when it matters).
    public var isQuoted: Bool {
        guard case .scalar(let s) = node else { return false }
        return s.style == .singleQuoted || s.style == .doubleQuoted
    }

    var kindName: String {
        switch node {
        case .scalar: return isNull ? "null" : "a scalar"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// The scalar's raw text. Ints, bools and floats are accepted and kept as written.
    public func string(_ what: String) throws -> String {
        guard case .scalar(let s) = node, !isNull else {
            throw error("\(what) must be a string, not \(kindName)", hint: "write a single value, quoted if it has special characters")
        }
        return s.string
    }

    public func optionalString(_ what: String) throws -> String? {
        isNull ? nil : try string(what)
    }

    public func int(_ what: String) throws -> Int {
        guard case .scalar(let s) = node, !isNull, let v = Int(s.string.trimmedSpaces) else {
            throw error("\(what) must be a whole number, not \(isScalar && !isNull ? "'\(node.string ?? "")'" : kindName)", hint: "write a number such as 1")
        }
        return v
    }

    public func bool(_ what: String) throws -> Bool {
        if case .scalar(let s) = node, !isNull {
            switch s.string.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: break
            }
        }
        throw error("\(what) must be true or false, not \(isScalar && !isNull ? "'\(node.string ?? "")'" : kindName)", hint: "write true or false")
    }

    public func sequence(_ what: String) throws -> [YNode] {
        guard case .sequence(let s) = node else {
            throw error("\(what) must be a list, not \(kindName)", hint: "write one '- item' per line")
        }
        return s.map { YNode($0, file: file) }
    }

    /// A list, or nothing for null (laconic stacks write `repos:` with no value).
    public func optionalSequence(_ what: String) throws -> [YNode] {
        isNull ? [] : try sequence(what)
    }

    /// A list of strings; a single string is accepted as a one-element list when `allowSingle`.
    public func stringList(_ what: String, allowSingle: Bool = false) throws -> [String] {
        if isNull { return [] }
        if allowSingle, isScalar { return [try string(what)] }
        return try sequence(what).enumerated().map { try $1.string("\(what)[\($0)]") }
    }

    /// The entries of a mapping in order, with `<<` merge keys applied (explicit keys win).
    public func entries(_ what: String) throws -> [(key: String, keyNode: YNode, value: YNode)] {
        guard case .mapping(let m) = node else {
            throw error("\(what) must be a mapping, not \(kindName)", hint: "write 'key: value' pairs, one per line")
        }
        var out: [(key: String, keyNode: YNode, value: YNode)] = []
        var merged: [(key: String, keyNode: YNode, value: YNode)] = []
        for (k, v) in m {
            let keyNode = YNode(k, file: file)
            guard case .scalar(let ks) = k else {
                throw keyNode.error("\(what) has a key that is not a string", hint: "keys must be plain names")
            }
            if ks.string == "<<" && ks.style == .plain {
                let sources = v.sequence.map { Array($0) } ?? [v]
                for src in sources {
                    let srcNode = YNode(src, file: file)
                    for e in try srcNode.entries(what) where !merged.contains(where: { $0.key == e.key }) { merged.append(e) }
                }
                continue
            }
            out.append((ks.string, keyNode, YNode(v, file: file)))
        }
        for e in merged where !out.contains(where: { $0.key == e.key }) { out.append(e) }
        return out
    }

    /// A reader that remembers which keys were asked for, to warn about the rest.
    public func mapping(_ what: String) throws -> MapReader {
        try MapReader(self, what: what)
    }
}

/// Reads a YAML mapping key by key; `finish` warns about keys nobody asked for.
public final class MapReader {
    public let node: YNode
    public let what: String
    public let entries: [(key: String, keyNode: YNode, value: YNode)]
    private var asked: [String] = []

    init(_ node: YNode, what: String) throws {
        self.node = node
        self.what = what
        self.entries = node.isNull ? [] : try node.entries(what)
    }

    public var keys: [String] { entries.map(\.key) }

    /// The value of `key`, or nil when absent. A present-but-null value is returned (check `isNull`).
    public func value(_ key: String) -> YNode? {
        if !asked.contains(key) { asked.append(key) }
        return entries.first(where: { $0.key == key })?.value
    }

    /// The value of `key`, nil when absent or null.
    public func nonNull(_ key: String) -> YNode? {
        guard let v = value(key), !v.isNull else { return nil }
        return v
    }

    public func required(_ key: String, hint: String? = nil) throws -> YNode {
        guard let v = nonNull(key) else {
            throw node.error("\(what) is missing '\(key)'", hint: hint ?? "add '\(key):' to \(what)")
        }
        return v
    }

    /// An error located at `key`'s value, or at the mapping itself when `key` is absent.
    public func error(at key: String, _ message: String, hint: String? = nil) -> SoError {
        (value(key) ?? node).error(message, hint: hint)
    }

    public func string(_ key: String) throws -> String? { try nonNull(key)?.string("'\(key)'") }
    public func int(_ key: String) throws -> Int? { try nonNull(key)?.int("'\(key)'") }
    public func bool(_ key: String) throws -> Bool? { try nonNull(key)?.bool("'\(key)'") }

    /// Marks keys as known without reading them.
    public func accept(_ keys: [String]) { for k in keys where !asked.contains(k) { asked.append(k) } }

    /// Warns about every key not asked for. Keys starting with `x-` are extensions and pass silently.
    public func finish(into sink: DiagnosticSink, ignoringPrefix prefix: String? = "x-") {
        for e in entries where !asked.contains(e.key) {
            if let prefix, e.key.hasPrefix(prefix) { continue }
            let hint = Suggest.closest(to: e.key, in: asked).map { "did you mean '\($0)'?" } ?? "it is ignored"
            sink.warn("unknown key '\(e.key)' in \(what)", hint: hint, at: e.keyNode.location)
        }
    }
}

extension YNode {
    /// An empty mapping, for optional sections that are absent.
    public static func emptyMapping(file: String) -> YNode { YNode(Node([(Node, Node)]()), file: file) }
}

extension YNode {
    /// A copy with every scalar *value* (not mapping keys) passed through `transform(text, line)`.
    /// Changed scalars become quoted strings, so an empty result stays an empty string, not null.
    public func mapScalarValues(_ transform: (String, Int?) throws -> String) rethrows -> YNode {
        func walk(_ n: Node) throws -> Node {
            switch n {
            case .scalar(let s):
                let isNull = s.style == .plain && ["", "~", "null", "Null", "NULL"].contains(s.string)
                if isNull { return n }
                let t = try transform(s.string, s.mark?.line)
                if t == s.string { return n }
                return .scalar(Node.Scalar(t, s.tag, .singleQuoted, s.mark))
            case .mapping(let m):
                return .mapping(Node.Mapping(try m.map { ($0.key, try walk($0.value)) }, m.tag, m.style, m.mark))
            case .sequence(let q):
                return .sequence(Node.Sequence(try q.map(walk), q.tag, q.style, q.mark))
            case .alias:
                return n
            }
        }
        return YNode(try walk(node), file: file)
    }
}
