import Foundation
import SoBasics
import SoKube
import SoRender

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
        return GitHubTakenDigests(
            text: object["data"]?[GitHubTakenDigests.dataKey]?.string ?? "",
            resourceVersion: object.at("metadata", "resourceVersion")?.string)
    }

    /// `digests` (each with when it was taken) added to those kept: read, added, written back at the resourceVersion
    /// read (a compare-and-swap: another loop's addition is read again and kept), up to 5 times.
    public func remember(_ digests: [(digest: String, at: Date)]) async throws {
        guard !digests.isEmpty else { return }
        for _ in 0..<5 {
            var kept = try await takenDigests()
            kept.add(digests)
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
