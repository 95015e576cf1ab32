import Foundation
import Yams

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
