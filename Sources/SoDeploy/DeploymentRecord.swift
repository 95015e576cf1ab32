import Foundation
import SoBasics

/// One revision of a deployment's record: what its directory holds, less secret values (`RecordFiles`), and
/// who wrote it, when, with which verb. The cluster keeps the last few (`RecordStore`), as Helm keeps releases.
public struct DeploymentRecord: Sendable, Equatable {
    public struct File: Sendable, Equatable, Codable {
        /// Relative to the deployment directory (`spec.yml`, `compose/docker-compose-web.yml` …).
        public var path: String
        public var data: Data
        public var executable: Bool

        public init(path: String, data: Data, executable: Bool = false) {
            self.path = path
            self.data = data
            self.executable = executable
        }
    }

    /// Who wrote a revision: the user as the API server names it, and the host.
    public struct Writer: Sendable, Equatable, Codable {
        public var user: String
        public var host: String
        public init(user: String, host: String) {
            self.user = user
            self.host = host
        }
        public var description: String { "\(user) on \(host)" }
    }

    public var deployment: String
    public var revision: Int
    /// The revision this one was made from (nil: the first, or one written with nothing before it).
    public var parent: Int?
    public var writer: Writer
    public var time: Date
    /// The verb that wrote it: start, up, restart, rollback, claim …
    public var verb: String
    public var version: String
    /// The warm pool it was claimed from.
    public var pool: String?
    /// The files, sorted by path.
    public let files: [File]
    /// SHA-256 of the files (paths, modes and bytes): two records with the same digest hold the same directory.
    /// Computed once, with the files.
    public let digest: String

    public init(
        deployment: String, revision: Int, parent: Int?, writer: Writer, time: Date, verb: String,
        version: String = SoRelease.version, pool: String? = nil, files: [File]
    ) {
        self.deployment = deployment
        self.revision = revision
        self.parent = parent
        self.writer = writer
        self.time = time
        self.verb = verb
        self.version = version
        self.pool = pool
        self.files = files.sorted { $0.path < $1.path }
        digest = Self.digest(self.files)
    }

    public static func digest(_ files: [File]) -> String {
        var h = SHA256()
        for f in files.sorted(by: { $0.path < $1.path }) {
            h.update("\(f.path)\u{0}\(f.executable ? 1 : 0)\u{0}\(f.data.count)\u{0}")
            h.update(f.data)
        }
        return h.hex()
    }

    /// What changed from `old` to `files`: `+path` added, `~path` changed, `-path` removed, sorted by path.
    public static func changes(from old: [File]?, to files: [File]) -> [String] {
        guard let old else { return files.map { "+" + $0.path }.sorted { $0.dropFirst() < $1.dropFirst() } }
        let before = Dictionary(old.map { ($0.path, $0) }) { a, _ in a }
        let after = Dictionary(files.map { ($0.path, $0) }) { a, _ in a }
        var out: [(String, String)] = []
        for (p, f) in after {
            if let b = before[p] {
                if b != f { out.append((p, "~")) }
            } else {
                out.append((p, "+"))
            }
        }
        for p in before.keys where after[p] == nil { out.append((p, "-")) }
        return out.sorted { $0.0 < $1.0 }.map { $0.1 + $0.0 }
    }

    // MARK: the stored form

    /// The payload's format name (`format` in its JSON): a reader refuses any other.
    static let format = "so.dev/record.v1"

    private struct Payload: Codable {
        var format: String
        var deployment: String
        var revision: Int
        var parent: Int?
        var writer: Writer
        var time: String
        var verb: String
        var version: String
        var pool: String?
        var files: [File]
    }

    /// The record as stored: sorted-key JSON, gzip-compressed.
    func encoded() throws -> Data {
        let payload = Payload(
            format: Self.format, deployment: deployment, revision: revision, parent: parent, writer: writer,
            time: Timestamps.rfc3339(time), verb: verb, version: version, pool: pool, files: files)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try Gzip.compress(try encoder.encode(payload))
    }

    /// The largest record `so` unpacks (a stored record is compressed; this bounds what it may unpack to).
    static let unpackedLimit = 64 * 1024 * 1024

    /// A stored record read back. `what` names the object for errors ("Secret ns/name").
    static func decoded(_ data: Data, what: String) throws -> DeploymentRecord {
        let json: Data
        do {
            json = try Gzip.decompress(data, limit: unpackedLimit)
        } catch let failure as Gzip.Failure {
            throw corrupted(what, "its data is not a record: \(failure.reason)")
        }
        let p: Payload
        do {
            p = try JSONDecoder().decode(Payload.self, from: json)
        } catch {
            throw corrupted(what, "its data does not read as a record (\(Self.describe(error)))")
        }
        guard p.format == format else { throw corrupted(what, "its format is '\(p.format)', not \(format)") }
        guard let time = Timestamps.parse(p.time) else { throw corrupted(what, "its time '\(p.time)' is not a time") }
        return DeploymentRecord(
            deployment: p.deployment, revision: p.revision, parent: p.parent, writer: p.writer, time: time,
            verb: p.verb, version: p.version, pool: p.pool, files: p.files)
    }

    static func corrupted(_ what: String, _ reason: String) -> SoError {
        SoError(
            "the deployment record \(what) is damaged: \(reason)",
            hint: "it was changed outside so; delete it (kubectl delete secret …) to fall back to the revision before, "
                + "or start from a directory with --force to write a new one")
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            return "\(c.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted(let c):
            return c.codingPath.isEmpty
                ? "not JSON" : "\(c.codingPath.map(\.stringValue).joined(separator: ".")) is bad"
        default: return "unreadable"
        }
    }
}
