import Foundation
import SoBasics

/// A Kubernetes object as an ordered value: the bytes written for it are the same every time.
public struct KubeObject: Sendable, Equatable {
    public var apiVersion: String
    public var kind: String
    public var name: String
    public var namespace: String?
    public var labels: [(String, String)]
    public var annotations: [(String, String)]
    /// Everything after metadata (`spec`, `data`, `type` …), in order.
    public var body: [(String, YValue)]

    public init(
        apiVersion: String, kind: String, name: String, namespace: String? = nil, labels: [(String, String)] = [],
        annotations: [(String, String)] = [], body: [(String, YValue)] = []
    ) {
        self.apiVersion = apiVersion
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.labels = labels
        self.annotations = annotations
        self.body = body
    }

    public static func == (a: KubeObject, b: KubeObject) -> Bool { a.value == b.value }

    public var value: YValue { value(resourceVersion: nil) }

    /// The object with `metadata.resourceVersion` set: the precondition of a compare-and-swap update.
    public func value(resourceVersion: String?) -> YValue {
        var meta: [(String, YValue)] = [("name", .string(name))]
        if let namespace { meta.append(("namespace", .string(namespace))) }
        if let resourceVersion { meta.append(("resourceVersion", .string(resourceVersion))) }
        if !labels.isEmpty { meta.append(("labels", .map(labels.map { ($0.0, .string($0.1)) }))) }
        if !annotations.isEmpty { meta.append(("annotations", .map(annotations.map { ($0.0, .string($0.1)) }))) }
        return .map([("apiVersion", .string(apiVersion)), ("kind", .string(kind)), ("metadata", .map(meta))] + body)
    }

    /// `Kind/name` or `Kind namespace/name`, for messages.
    public var reference: String { namespace.map { "\(kind) \($0)/\(name)" } ?? "\(kind) \(name)" }

    public func yaml() -> String { value.yaml() }
    public func json(pretty: Bool = true) -> String { value.json(pretty: pretty) }
}

extension KubeObject {
    /// Its `spec` (nil when it has none).
    public var spec: YValue? { body.first { $0.0 == "spec" }?.1 }

    /// The annotation `start` stamps on what it applies: a hash of exactly what was sent.
    public static let appliedHashAnnotation = "so.dev/applied-hash"

    /// FNV-1a (64 bits) of the object's compact JSON: tells a changed object from the one applied last
    /// (change detection, not security). A Secret's values are left out (its keys count): no function of
    /// secret material is written anywhere; `isUnchanged` compares the values themselves.
    public var appliedHash: String {
        var hashed = self
        if isKind(.secret) {
            hashed.body = body.map { k, v in
                guard k == "data" || k == "stringData", case .map(let pairs) = v else { return (k, v) }
                return (k, .map(pairs.map { ($0.0, .string("")) }))
            }
        }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in hashed.value.compactJSON() {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The object as `start` sends it: stamped with its `appliedHash`.
    public var stamped: KubeObject {
        var o = self
        o.annotations.append((Self.appliedHashAnnotation, appliedHash))
        return o
    }

    /// True when `live` (as stored) is what applying this object again would leave: it was applied from
    /// these very bytes (the hash) and still holds every field this object sets (nobody changed one since).
    /// Anything the server stores differently (a normalised quantity, a dropped empty field) counts as a
    /// change: applying then is always safe.
    public func isUnchanged(in live: JSON) -> Bool {
        // Items of a list carry no apiVersion/kind: the list said what they are.
        guard live.annotations[Self.appliedHashAnnotation] == appliedHash, case .map(let pairs) = value else {
            return false
        }
        return Self.covers(live, .map(pairs.filter { $0.0 != "apiVersion" && $0.0 != "kind" }))
    }

    static func covers(_ live: JSON?, _ want: YValue) -> Bool {
        // The API server omits zero values (`value: ""`, `0`, `false`, `{}`, `[]`): absent is the same.
        if live == nil || live == .null {
            switch want {
            case .null, .string(""), .int(0), .bool(false): return true
            case .map(let p) where p.isEmpty: return true
            case .list(let l) where l.isEmpty: return true
            default: return false
            }
        }
        switch want {
        case .null: if let live, live != .null { return false } else { return true }
        case .string(let s): return live?.string == s
        case .int(let i): if case .number(let n)? = live { return n == Double(i) } else { return false }
        case .bool(let b): return live?.bool == b
        case .list(let items):
            guard case .array(let have)? = live, have.count == items.count else { return false }
            return zip(have, items).allSatisfy { covers($0, $1) }
        case .map(let pairs):
            guard case .object(let have)? = live else { return false }
            return pairs.allSatisfy { covers(have[$0.0], $0.1) }
        }
    }
}
