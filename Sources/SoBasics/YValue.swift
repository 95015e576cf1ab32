import Foundation

/// An ordered YAML value for writing files byte-for-byte the same every time.
public indirect enum YValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null
    case map([(String, YValue)])
    case list([YValue])

    public static func == (a: YValue, b: YValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        case (.map(let x), .map(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.list(let x), .list(let y)): return x == y
        default: return false
        }
    }

    /// The value under `key` of a map (nil: not a map, or no such key).
    public func field(_ key: String) -> YValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// Writes block-style YAML: 2-space indents, list items indented under their key, strings quoted
    /// only when a YAML 1.1 reader could take them for something else.
    public func yaml() -> String {
        var out = ""
        YAMLEmit.emit(self, indent: 0, into: &out, atLineStart: true)
        return out
    }
}
