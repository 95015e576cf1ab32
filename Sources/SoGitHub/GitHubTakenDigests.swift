import Foundation
import SoBasics
import SoKube
import SoRender

/// The digests of the signed bodies whose entries the loop pruned from the inbox (`keep-days` after they ended), with
/// when each was taken: the same body sent again later (a replay under a new `X-GitHub-Delivery`; GitHub signs no
/// time) is refused when a pass would take it, as one the inbox still holds is (issue 64, item 5). One ConfigMap,
/// `so.github.taken-digests` in `so-github` (digests only: no text of an issue), its `digests` key a line per
/// digest, `SHA256HEX UNIXSECONDS`, oldest first. At most `bound` digests: past it the oldest taken go first.
public struct GitHubTakenDigests: Sendable, Equatable {
    public static let configMapName = "so.github.taken-digests"
    static let dataKey = "digests"
    static let label = "so.dev/github-loop"
    /// A line is 76 bytes: 12,000 of them are 0.9 MB, under the 1 MiB a ConfigMap holds. At 100 deliveries a day
    /// the loop takes, a replay is refused for 120 days past `keep-days`; past that, by the event's own time
    /// (`GitHubEvent.at`, `GitHubLoopExecutor.stale`).
    public static let bound = 12_000

    /// Digest (64 lowercase hex digits) → when its entry was taken (Unix seconds).
    public private(set) var taken: [String: Int64] = [:]
    /// The ConfigMap's resourceVersion as read (nil: there is none yet).
    public var resourceVersion: String?

    public init(taken: [String: Int64] = [:], resourceVersion: String? = nil) {
        self.taken = taken
        self.resourceVersion = resourceVersion
    }

    public func contains(_ digest: String) -> Bool { taken[digest.lowercased()] != nil }

    /// `digest` kept as taken at `at` (the earlier time when it was kept already), then the oldest dropped past
    /// `bound`.
    public mutating func add(_ digest: String, at: Date, bound: Int = bound) {
        let d = digest.lowercased()
        guard Self.isDigest(d) else { return }
        let t = Int64(at.timeIntervalSince1970.rounded(.down))
        taken[d] = min(taken[d] ?? t, t)
        guard taken.count > bound else { return }
        for (old, _) in Self.ordered(taken).prefix(taken.count - bound) { taken[old] = nil }
    }

    static func isDigest(_ s: String) -> Bool { s.utf8.count == 64 && s.utf8.allSatisfy { Self.hex.contains($0) } }
    static let hex = Set("0123456789abcdef".utf8)

    /// Oldest first (then by digest): the order of the lines and of dropping.
    static func ordered(_ taken: [String: Int64]) -> [(String, Int64)] {
        taken.map { ($0.key, $0.value) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    }

    /// The lines as stored.
    public var text: String { Self.ordered(taken).map { "\($0.0) \($0.1)\n" }.joined() }

    /// What `text` held; a line that is not a digest and a time is left out.
    static func parse(_ text: String, resourceVersion: String?) -> GitHubTakenDigests {
        var out = GitHubTakenDigests(resourceVersion: resourceVersion)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, isDigest(String(parts[0])), let t = Int64(parts[1]) else { continue }
            out.taken[String(parts[0])] = t
        }
        return out
    }
}

extension GitHubInbox.Entry {
    /// The SHA-256 of the signed body the entry was stored under (`GitHubInbox.bodyName`); nil for an entry named by
    /// its delivery's id.
    public var digest: String? {
        let prefix = "so.github.body-"
        guard secretName.hasPrefix(prefix) else { return nil }
        let d = String(secretName.dropFirst(prefix.count))
        return GitHubTakenDigests.isDigest(d) ? d : nil
    }
}

extension GitHubInbox {
    /// The digests taken and pruned, as the cluster holds them (none when there is no ConfigMap yet).
    public func takenDigests() async throws -> GitHubTakenDigests {
        // Through a list (the loop's account lists ConfigMaps in so-github already, for its threads).
        let found = try await client.list(
            .configMap, namespace: Self.namespace, labelSelector: "\(GitHubTakenDigests.label)=taken-digests")
        guard let object = found.first(where: { $0.name == GitHubTakenDigests.configMapName }) else {
            return GitHubTakenDigests()
        }
        return GitHubTakenDigests.parse(
            object["data"]?[GitHubTakenDigests.dataKey]?.string ?? "",
            resourceVersion: object.at("metadata", "resourceVersion")?.string)
    }

    /// `digests` (each with when it was taken) added to those kept: read, added, written back at the resourceVersion
    /// read (a compare-and-swap: another loop's addition is read again and kept), up to 5 times.
    public func remember(_ digests: [(digest: String, at: Date)]) async throws {
        guard !digests.isEmpty else { return }
        for _ in 0..<5 {
            var kept = try await takenDigests()
            for d in digests { kept.add(d.digest, at: d.at) }
            let object = KubeObject(
                .configMap, name: GitHubTakenDigests.configMapName, namespace: Self.namespace,
                labels: [(GitHubTakenDigests.label, "taken-digests"), DeploymentNames.Label.managedBySo],
                annotations: [
                    (
                        "so.dev/what",
                        "the SHA-256 of each signed body the GitHub loop took and pruned, and when: a replay is refused"
                    )
                ],
                body: [("data", .map([(GitHubTakenDigests.dataKey, .string(kept.text))]))])
            let written =
                if let rv = kept.resourceVersion {
                    try await client.update(object, resourceVersion: rv, fieldManager: "so")
                } else {
                    try await client.create(object, fieldManager: "so")
                }
            if written != nil { return }
        }
        throw SoError(
            "the taken digests (\(Self.namespace)/\(GitHubTakenDigests.configMapName)) changed 5 times while written",
            hint: "another loop prunes at once; the next prune adds them")
    }
}
