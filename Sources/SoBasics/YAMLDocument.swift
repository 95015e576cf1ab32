import Foundation
import Yams

/// A YAML file edited through its tree: parsed with the strict reader, changed as ordered values, written
/// back with the project's writer (`YValue.yaml()`). Keys keep their order and every value its text;
/// comment lines at the head of the file are kept. Other comments, blank lines, flow style (`{…}`) and
/// quoting a reader does not need are not: the writer lays the document out anew.
public struct YAMLDocument: Sendable {
    public var root: YValue
    /// Comment (and blank) lines before the first content line, written back as they were.
    public var header: String

    /// Parses `text`; an empty document is an empty mapping. `file` names it in errors.
    public init(text: String, file: String) throws {
        let node = try YAMLFile.parse(text, file: file)
        root = node.map { YValue(yaml: $0) } ?? .map([])
        // Lines as the reader breaks them: `\n`, `\r\n` (one Character in Swift, so not a "\n"), a lone `\r`,
        // and NEL, LS and PS. A break kept inside a comment line would make what follows it content.
        var lines = text.split(omittingEmptySubsequences: false) { YAMLFile.lineBreaks.contains($0) }
        if let last = text.last, YAMLFile.lineBreaks.contains(last) { lines.removeLast() }
        let head = lines.prefix { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            return t.isEmpty || t.hasPrefix("#")
        }
        header =
            head.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            ? head.joined(separator: "\n") + "\n" : ""
    }

    public var text: String {
        if case .map(let pairs) = root, pairs.isEmpty { return header }
        return header + root.yaml()
    }

    /// The value at a path of mapping keys, nil when a key is missing or a step is not a mapping.
    public func value(at path: [String]) -> YValue? {
        var v = root
        for key in path {
            guard case .map(let pairs) = v, let next = pairs.first(where: { $0.0 == key })?.1 else { return nil }
            v = next
        }
        return v
    }

    /// Sets the value at a path of mapping keys: a key present keeps its place, a new one goes last;
    /// missing (or null) mappings on the way are made. Throws when a step is not a mapping.
    public mutating func set(_ path: [String], _ value: YValue) throws {
        root = try Self.setting(root, path[...], value, done: [])
    }

    /// Inserts `item` at `index` (clamped; nil: at the end) of the list at `path`, made when missing or null.
    public mutating func insert(_ item: YValue, intoListAt path: [String], at index: Int? = nil) throws {
        var items: [YValue] = []
        switch value(at: path) {
        case .list(let l)?: items = l
        case .null?, nil: break
        default:
            throw SoError(
                "\(path.joined(separator: ".")) is not a list", hint: "make it a list ('- item' per line), or remove it"
            )
        }
        items.insert(item, at: min(max(index ?? items.count, 0), items.count))
        try set(path, .list(items))
    }

    static func setting(_ node: YValue, _ path: ArraySlice<String>, _ value: YValue, done: [String]) throws -> YValue {
        guard let key = path.first else { return value }
        var pairs: [(String, YValue)]
        switch node {
        case .map(let p): pairs = p
        case .null: pairs = []
        default:
            let at = done.isEmpty ? "the document" : done.joined(separator: ".")
            throw SoError(
                "\(at) is not a mapping, so '\(key)' cannot be set in it",
                hint: "make \(at) a mapping of 'key: value' lines")
        }
        if let i = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[i].1 = try setting(pairs[i].1, path.dropFirst(), value, done: done + [key])
        } else {
            pairs.append((key, try setting(.null, path.dropFirst(), value, done: done + [key])))
        }
        return .map(pairs)
    }
}

extension YValue {
    /// A node of the strict reader as an ordered value that writes back to the same text: plain scalars
    /// that are ints or booleans exactly as written (`8080`, `true`, `False`) keep their type, plain null
    /// forms stay null, everything else is a string (quoted when written, if a reader needs that). Merge
    /// keys (`<<`) are applied.
    public init(yaml n: YNode) {
        switch n.node {
        case .mapping:
            self = .map(((try? n.entries("value")) ?? []).map { ($0.key, YValue(yaml: $0.value)) })
        case .sequence:
            self = .list(((try? n.sequence("value")) ?? []).map { YValue(yaml: $0) })
        case .scalar(let s):
            if n.isNull {
                self = .null
                return
            }
            if s.style == .plain {
                if let i = Int(s.string), String(i) == s.string {
                    self = .int(i)
                    return
                }
                switch s.string {
                case "true", "True", "TRUE":
                    self = .bool(true)
                    return
                case "false", "False", "FALSE":
                    self = .bool(false)
                    return
                default: break
                }
            }
            self = .string(s.string)
        case .alias:
            self = .null
        }
    }
}
