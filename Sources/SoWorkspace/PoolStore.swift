import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender

/// Where pools are recorded: in the cluster, a Secret per pool (`so.pool.NAME`, type `so.dev/pool.v1`) in the
/// namespace `so-pools`, so `so up` on any machine with the kubeconfig claims from a pool another machine made, any
/// machine refills it, and `pool list` shows every pool of the cluster. A Secret, not a ConfigMap: a pool's
/// `--config` is its members' (an endpoint, a key's name), read by whoever may read Secrets there.
///
/// Writes are conditional: a new pool is created only if absent, a changed one carries the resourceVersion it was
/// read at (two machines resizing one pool at once: the second is refused, not lost). Pools recorded by an older
/// `so` in `$SO_HOME/pools/NAME.json` move into the cluster the first time this `so` reads the pools.
public struct PoolStore: Sendable {
    public let ctx: SoContext
    public let client: ClusterClient

    public static let namespace = "so-pools"
    public static let secretType = "so.dev/pool.v1"
    /// The label every pool's Secret carries: the pool's name.
    public static let label = "so.dev/pool-record"
    static let dataKey = "pool"

    public init(ctx: SoContext, client: ClusterClient) {
        self.ctx = ctx
        self.client = client
    }

    /// The store of the cluster `cluster` names.
    public static func open(_ ctx: SoContext, _ cluster: ClusterOptions) async throws -> PoolStore {
        PoolStore(ctx: ctx, client: try ctx.connect(try await ClusterTargets(ctx: ctx).shared(cluster).connection))
    }

    static func secretName(_ pool: String) -> String { "so.pool.\(pool)" }

    /// A pool as the cluster holds it, and the resourceVersion it was read at.
    public struct Stored: Sendable {
        public var record: PoolRecord
        public var resourceVersion: String
    }

    /// Every pool on the cluster, by name.
    public func all() async throws -> [PoolRecord] {
        try await migrate()
        return try await client.list(.secret, namespace: Self.namespace, labelSelector: Self.label)
            .compactMap { try decode($0)?.record }.sorted { $0.name < $1.name }
    }

    /// The pool `name`, or nil when the cluster holds none of that name.
    public func load(_ name: String) async throws -> PoolRecord? { try await stored(name)?.record }

    public func stored(_ name: String) async throws -> Stored? {
        try NameRules.checkWorkspaceName(name)
        try await migrate()
        guard let s = try await client.get(.secret, name: Self.secretName(name), namespace: Self.namespace) else {
            return nil
        }
        return try decode(s)
    }

    func decode(_ secret: JSON) throws -> Stored? {
        guard let name = secret.labels[Self.label], NameRules.isDNSLabel(name) else { return nil }
        let at = "the pool Secret \(Self.namespace)/\(secret.name)"
        guard let encoded = secret["data"]?[Self.dataKey]?.string, let data = Data(base64Encoded: encoded) else {
            throw SoError("\(at) is damaged: it holds no '\(Self.dataKey)'", hint: "remove it: so pool remove \(name)")
        }
        let record = try PoolRecord.parse(name: name, data: data, at: at)
        return Stored(record: record, resourceVersion: secret.at("metadata", "resourceVersion")?.string ?? "")
    }

    /// Records `record`: created when `over` is nil (refused if another writer made it meanwhile), else changed
    /// only if the cluster's copy is still the one read at `over`.
    public func save(_ record: PoolRecord, over: Stored?) async throws {
        let data = Data((JSONWriter.encode(record, .pretty) + "\n").utf8).base64EncodedString()
        if let over {
            let patch: [String: Any] = [
                "metadata": ["resourceVersion": over.resourceVersion], "data": [Self.dataKey: data],
            ]
            do {
                _ = try await client.patch(
                    .secret, name: Self.secretName(record.name), namespace: Self.namespace,
                    mergePatch: try JSONSerialization.data(withJSONObject: patch, options: [.sortedKeys]))
            } catch let e as SoError where e.message.contains("(Conflict)") || e.message.contains("(NotFound)") {
                throw Self.changedMeanwhile(record.name)
            }
            return
        }
        _ = try await client.create(
            KubeObject(
                .namespace, name: Self.namespace, labels: [("so.dev/role", "pools")],
                annotations: [("so.dev/what", "the warm pools of so (so pool list): a Secret per pool")]),
            fieldManager: "so")
        let secret = KubeObject(
            .secret, name: Self.secretName(record.name), namespace: Self.namespace,
            labels: [(Self.label, record.name), DeploymentNames.Label.managedBySo],
            body: [("type", .string(Self.secretType)), ("data", .map([(Self.dataKey, .string(data))]))])
        guard try await client.create(secret, fieldManager: "so") != nil else {
            throw Self.changedMeanwhile(record.name)
        }
    }

    static func changedMeanwhile(_ pool: String) -> SoError {
        SoError(
            "pool \(pool) was changed on the cluster by another so while this one changed it",
            hint: "see it as it is now (so pool list), then run the command again")
    }

    /// Removes the pool's record; false when it was gone already.
    @discardableResult
    public func remove(_ name: String) async throws -> Bool {
        try NameRules.checkWorkspaceName(name)
        return try await client.delete(
            .secret, name: Self.secretName(name), namespace: Self.namespace, propagation: .background)
    }

    /// Pools an older `so` recorded in `$SO_HOME/pools/NAME.json`, moved to the cluster (said once each); a pool of
    /// that name already on the cluster wins, and the file goes.
    func migrate() async throws {
        let dir = PoolRecord.directory(ctx)
        guard ctx.fs.isDirectory(dir) else { return }
        for file in try ctx.fs.list(dir).sorted() where file.hasSuffix(".json") {
            let name = String(file.dropLast(5))
            guard NameRules.isDNSLabel(name), let record = try PoolRecord.loadFile(ctx, name) else { continue }
            let path = Path.join(dir, file)
            if try await client.get(.secret, name: Self.secretName(name), namespace: Self.namespace) == nil {
                do { try await save(record, over: nil) } catch let e as SoError
                    where e.message == Self.changedMeanwhile(name).message
                {
                    // Another so moved it meanwhile.
                }
                ctx.say(
                    "pool \(name): its record moved from \(path) to the cluster (Secret \(Self.namespace)/\(Self.secretName(name)))"
                )
            }
            try ctx.fs.remove(path)
        }
    }
}
