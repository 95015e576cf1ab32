import Foundation
import Yams

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
    public var isScalar: Bool {
        if case .scalar = node { return true }
        return false
    }
    public var isMapping: Bool {
        if case .mapping = node { return true }
        return false
    }
    public var isSequence: Bool {
        if case .sequence = node { return true }
        return false
    }
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
            throw error(
                "\(what) must be a string, not \(kindName)",
                hint: "write a single value, quoted if it has special characters")
        }
        return s.string
    }

    public func optionalString(_ what: String) throws -> String? {
        isNull ? nil : try string(what)
    }

    public func int(_ what: String) throws -> Int {
        guard case .scalar(let s) = node, !isNull, let v = Int(s.string.trimmedSpaces) else {
            throw error(
                "\(what) must be a whole number, not \(isScalar && !isNull ? "'\(node.string ?? "")'" : kindName)",
                hint: "write a number such as 1")
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
        throw error(
            "\(what) must be true or false, not \(isScalar && !isNull ? "'\(node.string ?? "")'" : kindName)",
            hint: "write true or false")
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
                    for e in try srcNode.entries(what) where !merged.contains(where: { $0.key == e.key }) {
                        merged.append(e)
                    }
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
