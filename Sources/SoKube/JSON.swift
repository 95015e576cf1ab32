import Foundation
import SoBasics

extension JSON {
    /// The same value as a `YValue` (object keys sorted), to send back, e.g. in a merge patch. Numbers
    /// without a fraction become integers; others keep their shortest text.
    public var yValue: YValue {
        switch self {
        case .object(let o): return .map(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.yValue) })
        case .array(let a): return .list(a.map(\.yValue))
        case .string(let s): return .string(s)
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? .int(Int(n)) : .string(String(n))
        case .bool(let b): return .bool(b)
        case .null: return .null
        }
    }
}

/// A JSON value read back from the API server.
public indirect enum JSON: Sendable, Equatable {
    case object([String: JSON])
    case array([JSON])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public static func parse(_ data: Data) throws -> JSON { try JSONReader.parse(data) }
    /// Only what `shape` names is read; the rest is skipped over, never built.
    public static func parse(_ data: Data, keeping shape: JSONShape) throws -> JSON {
        try JSONReader.parse(data, keeping: shape)
    }

    public subscript(_ key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
    /// Follows a dotted path: `json["status.readyReplicas"]`-style via `at("status", "readyReplicas")`.
    public func at(_ keys: String...) -> JSON? {
        var cur: JSON? = self
        for k in keys { cur = cur?[k] }
        return cur
    }
    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    /// The number without its fraction; nil past Int's range (`1e300` from an agent's usage line trapped).
    public var int: Int? {
        if case .number(let n) = self { return Int(exactly: n.rounded(.towardZero)) }
        return nil
    }
    public var double: Double? {
        if case .number(let n) = self { return n }
        return nil
    }
    public var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var array: [JSON] {
        if case .array(let a) = self { return a }
        return []
    }
    public var object: [String: JSON] {
        if case .object(let o) = self { return o }
        return [:]
    }
    public var name: String { at("metadata", "name")?.string ?? "" }
    public var namespace: String? { at("metadata", "namespace")?.string }
    public var labels: [String: String] { (at("metadata", "labels")?.object ?? [:]).compactMapValues(\.string) }
    public var annotations: [String: String] {
        (at("metadata", "annotations")?.object ?? [:]).compactMapValues(\.string)
    }
}
