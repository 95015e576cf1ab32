import Foundation
import SoBasics
import SoKube
import SoRender
import SoWorkspace

/// Where the GitHub loop keeps its threads (`GitHubLoopThread`), so a loop restarted anywhere goes on where the last
/// stopped: a ConfigMap per thread, `so.github.thread.WORKSPACE` in `so-github`, labeled `so.dev/github-loop=thread`,
/// its `thread` key the thread as JSON. Names and numbers only (no text of an issue or comment), so a ConfigMap.
/// Every write is conditional: made only if absent, replaced only at the resourceVersion read (a compare-and-swap),
/// so two loops never both think they hold a thread.
public struct GitHubLoopStore: Sendable {
    public let client: ClusterClient
    public static let label = "so.dev/github-loop"
    static let dataKey = "thread"

    public init(client: ClusterClient) { self.client = client }

    public static func configMapName(_ workspace: String) -> String { "so.github.thread.\(workspace)" }

    /// A thread as the cluster holds it; `resourceVersion` is what `save` replaces.
    public struct Stored: Sendable, Equatable {
        public var thread: GitHubLoopThread
        public var resourceVersion: String
    }

    /// Every thread, by issue (repository, then number). A ConfigMap that does not read as one is left out.
    public func all() async throws -> [Stored] {
        try await client.list(.configMap, namespace: GitHubInbox.namespace, labelSelector: "\(Self.label)=thread")
            .compactMap(Self.decode)
            .sorted {
                ($0.thread.repository.lowercased(), $0.thread.issue) < (
                    $1.thread.repository.lowercased(), $1.thread.issue
                )
            }
    }

    static func decode(_ object: JSON) -> Stored? {
        guard let text = object["data"]?[dataKey]?.string,
            // a thread that does not decode is not this loop's
            let thread = try? decoder.decode(GitHubLoopThread.self, from: Data(text.utf8)),
            object.name == configMapName(thread.workspace)
        else { return nil }
        return Stored(thread: thread, resourceVersion: object.at("metadata", "resourceVersion")?.string ?? "")
    }

    /// Writes `thread`: made when `over` is nil (false when one of its workspace exists), else replaced only if still
    /// at `over`'s resourceVersion (false when another loop changed it meanwhile).
    public func save(_ thread: GitHubLoopThread, over: Stored?) async throws -> Bool {
        try await saved(thread, over: over) != nil
    }

    /// `save`, returning the thread as stored (its new resourceVersion, for the next save), or nil when refused.
    public func saved(_ thread: GitHubLoopThread, over: Stored?) async throws -> Stored? {
        let data = try Self.encoder.encode(thread)
        let object = KubeObject(
            .configMap, name: Self.configMapName(thread.workspace), namespace: GitHubInbox.namespace,
            labels: [(Self.label, "thread"), DeploymentNames.Label.managedBySo],
            body: [("data", .map([(Self.dataKey, .string(String(decoding: data, as: UTF8.self)))]))])
        let written: JSON?
        if let over {
            written = try await client.update(object, resourceVersion: over.resourceVersion, fieldManager: "so")
        } else {
            written = try await client.create(object, fieldManager: "so")
        }
        return written.map {
            Stored(thread: thread, resourceVersion: $0.at("metadata", "resourceVersion")?.string ?? "")
        }
    }

    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .secondsSince1970
        return e
    }
    static var decoder: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .secondsSince1970
        return d
    }
}
