import Foundation
import SoBasics
import SoKube

/// A revision as its head Secret says: enough for `history` and the stale check, without its payload.
public struct RecordHead: Sendable, Equatable {
    public static let applying = "applying"
    public var name: String
    public var namespace: String
    public var resourceVersion: String
    public var revision: Int
    public var parent: Int?
    public var digest: String
    public var writer: DeploymentRecord.Writer
    public var time: Date
    public var verb: String
    public var version: String
    public var changed: String
    public var result: String
    public var chunks: Int
    public var pool: String?
    /// The head's own part of the record (base64-decoded).
    var data: Data

    var what: String { "Secret \(namespace)/\(name)" }

    init(json: JSON, namespace: String) throws {
        let a = json.annotations
        let l = json.labels
        name = json.name
        self.namespace = namespace
        let what = "Secret \(namespace)/\(json.name)"
        func need(_ key: String, _ text: String?) throws -> String {
            guard let text, !text.isEmpty else { throw DeploymentRecord.corrupted(what, "it has no \(key)") }
            return text
        }
        resourceVersion = try need("resourceVersion", json.at("metadata", "resourceVersion")?.string)
        guard let r = Int(try need(RecordStore.Key.revision, l[RecordStore.Key.revision])), r > 0 else {
            throw DeploymentRecord.corrupted(what, "its revision label is not a positive number")
        }
        revision = r
        parent = a[RecordStore.Key.parent].flatMap(Int.init)
        digest = try need(RecordStore.Key.digest, a[RecordStore.Key.digest])
        writer = .init(user: a[RecordStore.Key.user] ?? "unknown", host: a[RecordStore.Key.host] ?? "unknown")
        guard let t = Timestamps.parse(try need(RecordStore.Key.time, a[RecordStore.Key.time])) else {
            throw DeploymentRecord.corrupted(what, "its time is not a time")
        }
        time = t
        verb = a[RecordStore.Key.verb] ?? "start"
        version = a[RecordStore.Key.version] ?? ""
        changed = a[RecordStore.Key.changed] ?? ""
        result = a[RecordStore.Key.result] ?? ""
        guard let c = Int(a[RecordStore.Key.chunks] ?? "1"), (1...RecordStore.maxChunks).contains(c) else {
            throw DeploymentRecord.corrupted(what, "its chunk count is not 1 to \(RecordStore.maxChunks)")
        }
        chunks = c
        pool = a[RecordStore.Key.pool]
        guard let d = json.at("data", "record")?.string.flatMap({ Data(base64Encoded: $0) }) else {
            throw DeploymentRecord.corrupted(what, "it holds no record data")
        }
        data = d
    }

    /// The result for people: `applying` on a head no start is finishing reads "interrupted".
    public var shownResult: String {
        result == Self.applying ? "interrupted (its writer stopped before the end)" : result
    }
}
