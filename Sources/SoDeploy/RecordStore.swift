import Foundation
import SoBasics
import SoKube
import SoRender

/// A deployment's record in the cluster: one Secret per revision (type `so.dev/record.v1`, in the deployment's
/// namespace, named `so.record.ID.vN`), its data the gzip of the record; a record larger than one Secret holds is
/// split over `so.record.ID.vN.2`, `.3` … written first, the head last. The head's annotations say who wrote it,
/// when, with which verb, what changed and how it ended, so `history` reads no payload.
///
/// Writes are conditional: revision N+1 is created only if absent (two writers of the same revision: one wins);
/// the result is set with the head's resourceVersion as a precondition. Every writer holds the deployment's Lease
/// too. Records carry no `app.kubernetes.io/instance` label, so start's prune and stop leave them; they go with the
/// namespace.
public struct RecordStore: Sendable {
    let client: ClusterClient
    let namespace: String
    let deployment: String

    public init(client: ClusterClient, namespace: String, deployment: String) {
        self.client = client
        self.namespace = namespace
        self.deployment = deployment
    }

    public static let secretType = "so.dev/record.v1"
    public enum Key {
        public static let of = "so.dev/record-of"
        public static let part = "so.dev/record-part"
        public static let revision = "so.dev/record-revision"
        public static let parent = "so.dev/record-parent"
        public static let digest = "so.dev/record-digest"
        public static let user = "so.dev/record-user"
        public static let host = "so.dev/record-host"
        public static let time = "so.dev/record-time"
        public static let verb = "so.dev/record-verb"
        public static let version = "so.dev/record-version"
        public static let changed = "so.dev/record-changed"
        public static let chunks = "so.dev/record-chunks"
        public static let result = "so.dev/record-result"
        public static let pool = "so.dev/record-pool"
    }
    /// Bytes of compressed record per Secret (a Secret holds 1 MiB at most, with its metadata).
    static let chunkBytes = 900 * 1024
    /// Secrets one revision may take: a record past `chunkBytes * maxChunks` compressed is refused.
    static let maxChunks = 8
    /// Revisions kept when neither the flag nor the spec says.
    public static let defaultHistory = 10

    public static func name(_ deployment: String, revision: Int) -> String { "so.record.\(deployment).v\(revision)" }
    static func chunkName(_ deployment: String, revision: Int, part: Int) -> String {
        name(deployment, revision: revision) + ".\(part)"
    }

    var headSelector: String { "\(Key.of)=\(deployment),\(Key.part)=head" }

    /// Every revision's head, oldest first. A head whose annotations do not read is an error naming it.
    public func heads() async throws -> [RecordHead] {
        let items = try await client.list(.secret, namespace: namespace, labelSelector: headSelector)
        return try items.map { try RecordHead(json: $0, namespace: namespace) }.sorted { $0.revision < $1.revision }
    }

    /// The record `head` holds (its chunks read too), checked against the head: same deployment, revision and
    /// digest, or an error naming the object.
    public func read(_ head: RecordHead) async throws -> DeploymentRecord {
        var data = head.data
        if head.chunks > 1 {
            for part in 2...head.chunks {
                let name = Self.chunkName(deployment, revision: head.revision, part: part)
                guard let chunk = try await client.get(.secret, name: name, namespace: namespace) else {
                    throw DeploymentRecord.corrupted(head.what, "its part \(name) is missing")
                }
                guard let d = chunk.at("data", "record")?.string.flatMap({ Data(base64Encoded: $0) }) else {
                    throw DeploymentRecord.corrupted("Secret \(namespace)/\(name)", "it holds no record data")
                }
                data.append(d)
            }
        }
        let record = try DeploymentRecord.decoded(data, what: head.what)
        guard record.deployment == deployment, record.revision == head.revision else {
            throw DeploymentRecord.corrupted(
                head.what,
                "it holds revision \(record.revision) of \(record.deployment), not \(head.revision) of \(deployment)")
        }
        guard record.digest == head.digest else {
            throw DeploymentRecord.corrupted(head.what, "its files do not match its digest")
        }
        return record
    }

    /// Writes `record` as a new revision, its result `applying` until `finish` (or `result`, for a verb that is
    /// done when its revision is written): the chunks, then the head, each created only if absent. Refused, with
    /// nothing left, when the record is too large or another writer made the revision first.
    public func write(_ record: DeploymentRecord, changed: [String], result: String = RecordHead.applying)
        async throws -> RecordHead
    {
        let payload = try record.encoded()
        let parts = stride(from: 0, to: max(payload.count, 1), by: Self.chunkBytes).map {
            payload.subdata(in: $0..<min($0 + Self.chunkBytes, payload.count))
        }
        if parts.count > Self.maxChunks {
            let largest = record.files.sorted { $0.data.count > $1.data.count }.prefix(3)
                .map { "\($0.path) (\(Self.size($0.data.count)))" }
            throw SoError(
                "the record of \(deployment) is \(Self.size(payload.count)) compressed, more than the "
                    + "\(Self.size(Self.chunkBytes * Self.maxChunks)) the cluster keeps for one revision; "
                    + "the largest files: \(largest.joined(separator: ", "))",
                hint: "move large files out of the deployment's config directories (into an image or a volume)")
        }
        let base: [(String, String)] = [
            (Key.of, deployment), (Key.revision, String(record.revision)), DeploymentNames.Label.managedBySo,
        ]
        var made: [String] = []
        do {
            for (i, part) in parts.enumerated().dropFirst() {
                let name = Self.chunkName(deployment, revision: record.revision, part: i + 1)
                let chunk = KubeObject(
                    .secret, name: name, namespace: namespace, labels: base + [(Key.part, "chunk")],
                    body: [
                        ("type", .string(Self.secretType)),
                        ("data", .map([("record", .string(part.base64EncodedString()))])),
                    ])
                if try await client.create(chunk, fieldManager: "so") == nil {
                    // A part of this revision without its head is what a writer killed between the two left: it
                    // goes, and this writer's takes its place. With a head, another writer made the revision.
                    let headName = Self.name(deployment, revision: record.revision)
                    guard try await client.get(.secret, name: headName, namespace: namespace) == nil,
                        try await client.delete(.secret, name: name, namespace: namespace, propagation: .background),
                        try await client.create(chunk, fieldManager: "so") != nil
                    else { throw Self.taken(record.revision) }
                }
                made.append(name)
            }
            var annotations: [(String, String)] = [
                (Key.digest, record.digest), (Key.user, record.writer.user), (Key.host, record.writer.host),
                (Key.time, Timestamps.rfc3339(record.time)), (Key.verb, record.verb), (Key.version, record.version),
                (Key.chunks, String(parts.count)), (Key.result, result),
                (Key.changed, Self.summary(changed)),
            ]
            if let parent = record.parent { annotations.append((Key.parent, String(parent))) }
            if let pool = record.pool { annotations.append((Key.pool, pool)) }
            let head = KubeObject(
                .secret, name: Self.name(deployment, revision: record.revision), namespace: namespace,
                labels: base + [(Key.part, "head")], annotations: annotations,
                body: [
                    ("type", .string(Self.secretType)),
                    ("data", .map([("record", .string((parts.first ?? Data()).base64EncodedString()))])),
                ])
            guard let stored = try await client.create(head, fieldManager: "so") else {
                throw Self.taken(record.revision)
            }
            return try RecordHead(json: stored, namespace: namespace)
        } catch {
            // What this writer made of a revision it did not finish goes (best effort: a later writer removes
            // chunks without a head too).
            for name in made {
                _ = try? await client.delete(.secret, name: name, namespace: namespace, propagation: .background)
            }
            throw error
        }
    }

    /// "812 KiB", "7.2 MiB".
    static func size(_ bytes: Int) -> String {
        if bytes < 1024 * 1024 { return "\((bytes + 1023) / 1024) KiB" }
        return String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    static func taken(_ revision: Int) -> SoError {
        SoError(
            "another writer made revision \(revision) of this deployment's record first",
            hint: "see it with 'so deployment history', take it with 'so deployment pull', then start again")
    }

    /// "3 files changed: ~spec.yml +config/a.txt …", at most 240 characters.
    static func summary(_ changed: [String]) -> String {
        var out = ""
        for (i, c) in changed.enumerated() {
            let next = (out.isEmpty ? "" : " ") + c
            if out.count + next.count > 230 {
                out += " …+\(changed.count - i)"
                break
            }
            out += next
        }
        return out
    }

    /// Every revision and chunk of the record: what deleting the namespace does, where the namespace is kept
    /// (it holds others' objects).
    public func removeAll() async throws {
        for s in try await client.list(.secret, namespace: namespace, labelSelector: "\(Key.of)=\(deployment)") {
            _ = try await client.delete(.secret, name: s.name, namespace: namespace, propagation: .background)
        }
    }

    /// Sets how the revision's start ended, if the head is still as `head` read it (a precondition on its
    /// resourceVersion); false when someone changed or removed it since.
    @discardableResult
    public func finish(_ head: RecordHead, result: String) async throws -> Bool {
        let clean = String(result.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.prefix(300))
        let patch: [String: Any] = [
            "metadata": ["resourceVersion": head.resourceVersion, "annotations": [Key.result: clean]]
        ]
        let body = try JSONSerialization.data(withJSONObject: patch, options: [.sortedKeys])
        do {
            _ = try await client.patch(.secret, name: head.name, namespace: namespace, mergePatch: body)
            return true
        } catch let e as SoError where e.message.contains("(Conflict)") || e.message.contains("(NotFound)") {
            return false
        }
    }

    /// Removes revisions older than the newest `keep`, and chunks whose head is gone (a writer stopped between
    /// them). Returns the revisions removed.
    @discardableResult
    /// `orphans` false: no chunks are looked for (a first revision: no writer can have left any).
    public func prune(keep: Int, heads: [RecordHead], orphans: Bool = true) async throws -> [Int] {
        let sorted = heads.sorted { $0.revision < $1.revision }
        let old = sorted.dropLast(max(1, keep))
        var removed: [Int] = []
        for h in old {
            for part in stride(from: h.chunks, through: 2, by: -1) {
                _ = try await client.delete(
                    .secret, name: Self.chunkName(deployment, revision: h.revision, part: part), namespace: namespace,
                    propagation: .background)
            }
            if try await client.delete(.secret, name: h.name, namespace: namespace, resourceVersion: h.resourceVersion)
            {
                removed.append(h.revision)
            }
        }
        guard orphans || !removed.isEmpty else { return removed }
        let live = Set(sorted.map(\.revision)).subtracting(removed)
        let chunks = try await client.list(
            .secret, namespace: namespace, labelSelector: "\(Key.of)=\(deployment),\(Key.part)=chunk")
        for c in chunks {
            guard let r = c.labels[Key.revision].flatMap(Int.init), !live.contains(r) else { continue }
            _ = try await client.delete(.secret, name: c.name, namespace: namespace, propagation: .background)
        }
        return removed
    }
}
