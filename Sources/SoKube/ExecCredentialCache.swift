import Foundation
import SoBasics

/// Exec credentials kept in this process until they expire, one per plugin and cluster (as client-go
/// keeps them), so every connection that names the same plugin runs it once; concurrent requests wait
/// for the one run.
public actor ExecCredentialCache {
    public static let shared = ExecCredentialCache()

    struct Key: Hashable {
        var plugin: ExecPlugin
        var cluster: String
    }
    private var cached: [Key: ExecCredential] = [:]
    private var running: [Key: Task<ExecCredential, Error>] = [:]
    /// How many times a plugin was run (tests read it).
    public private(set) var runs = 0

    public init() {}

    /// The credential kept for `plugin` while it holds; else, or when it is the `stale` one the server
    /// refused, the plugin's next one.
    public func credential(
        _ plugin: ExecPlugin, for connection: ClusterConnection, effects: CredentialEffects,
        replacing stale: ExecCredential? = nil
    ) async throws -> ExecCredential {
        let key = Key(
            plugin: plugin,
            cluster: ExecPlugins.clusterInfo(connection, plugin).map {
                String(decoding: $0.compactJSON(), as: UTF8.self)
            } ?? "")
        if let c = cached[key], c != stale, !c.expired(at: effects.clock.now()) { return c }
        if let t = running[key] { return try await t.value }
        let task = Task { try await ExecPlugins.run(plugin, for: connection, effects: effects) }
        running[key] = task
        runs += 1
        do {
            let c = try await task.value
            running[key] = nil
            cached[key] = c
            return c
        } catch {
            running[key] = nil
            throw error
        }
    }
}
