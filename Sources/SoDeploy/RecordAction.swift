import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// The verbs over a deployment's record in the cluster (`RecordStore`): a directory made from it (`--name` on a
/// machine without one), `pull`, `history` and `rollback`.
public struct RecordAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    /// The cluster's latest revision of the deployment `so up` named `name` (namespace `name`), or nil when the
    /// cluster holds none.
    func latestNamed(_ name: String, client: ClusterClient) async throws -> (RecordStore, RecordHead)? {
        let heads = try await client.list(.secret, namespace: name, labelSelector: "\(RecordStore.Key.part)=head")
        let ids = Set(heads.compactMap { $0.labels[RecordStore.Key.of] })
        guard !ids.isEmpty else { return nil }
        let id: String
        if ids.count == 1, let only = ids.first {
            id = only
        } else if ids.contains(name) {
            id = name
        } else {
            throw SoError(
                "namespace \(name) holds the records of several deployments (\(ids.sorted().joined(separator: ", ")))",
                hint: "use the directory of the one you mean: so deployment --dir DIR …")
        }
        let store = RecordStore(client: client, namespace: name, deployment: id)
        guard let latest = try await store.heads().last else { return nil }
        return (store, latest)
    }

    /// `--name NAME` where `$SO_HOME/deployments/NAME` does not exist: made from the cluster's latest record (said
    /// on stderr), so every verb runs from any machine with the kubeconfig. The path; an error naming what was
    /// looked at when the cluster holds no record either.
    public func materialize(name: String, cluster: ClusterOptions) async throws -> String {
        let dir = try ctx.namedDeployment(name)
        let target: ClusterTarget
        do { target = try await ClusterTargets(ctx: ctx).shared(cluster) } catch let e as SoError {
            throw SoError(
                "no deployment named '\(name)' on this host (\(dir) does not exist), and no cluster to look for its "
                    + "record in: \(e.message)", hint: e.hint, exitCode: e.exitCode)
        }
        guard let made = try await materialize(name: name, client: try ctx.connect(target.connection)) else {
            throw SoError(
                "no deployment named '\(name)' on this host (\(dir) does not exist), and the cluster (context "
                    + "\(target.connection.contextName)) holds no record of it in namespace \(name)",
                hint: "see what there is: so deployment list; make one: so up STACK --name \(name)")
        }
        return made
    }

    /// `materialize(name:cluster:)` over `client`; nil when the cluster holds no record of `name`. `into`: another
    /// directory than `$SO_HOME/deployments/NAME` (a pool's member claimed as the workspace of another name).
    public func materialize(name: String, client: ClusterClient, into: String? = nil) async throws -> String? {
        let dir = try into ?? ctx.namedDeployment(name)
        guard let (store, latest) = try await latestNamed(name, client: client) else { return nil }
        let record = try await store.read(latest)
        try RecordFiles.write(record, to: dir, fs: ctx.fs)
        if !ctx.options.quiet {
            ctx.console.err(
                "made \(dir) from the cluster's record of \(name) (revision \(record.revision), \(record.verb) by "
                    + "\(record.writer.description) at \(Timestamps.rfc3339(record.time)))")
        }
        return dir
    }

    /// `$SO_HOME/deployments/NAME` in step with the cluster's latest record of `name`: made, or its files that
    /// differ replaced (their old copies kept as `.bak`). What the page acts on (the deployment the cluster runs);
    /// nil when the cluster holds no record of `name`.
    public func inStep(name: String, client: ClusterClient) async throws -> String? {
        let dir = try ctx.namedDeployment(name)
        guard let (store, latest) = try await latestNamed(name, client: client) else { return nil }
        try RecordFiles.write(try await store.read(latest), to: dir, fs: ctx.fs, keepOld: true)
        return dir
    }

    public struct Pulled: Sendable {
        public var directory: String
        public var revision: Int
        public var writer: DeploymentRecord.Writer
        public var time: Date
        /// Files written or removed (their old copies kept as `.bak`).
        public var changed: [String]
    }

    /// `pull`: the directory written from the cluster's latest record (files that differ are kept as `.bak`).
    public func pull(directory: String, cluster: ClusterOptions) async throws -> Pulled {
        let d = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        let store = RecordStore(client: d.client, namespace: d.namespace, deployment: d.model.id)
        guard let latest = try await store.heads().last else {
            throw SoError(
                "the cluster holds no record of \(d.model.id) in namespace \(d.namespace)",
                hint: "its next start writes one: so deployment --dir \(directory) start")
        }
        let record = try await store.read(latest)
        let changed = try RecordFiles.write(record, to: d.model.directory, fs: ctx.fs, keepOld: true)
        return Pulled(
            directory: d.model.directory, revision: record.revision, writer: record.writer, time: record.time,
            changed: changed)
    }

    /// `history`: every revision the cluster keeps, oldest first.
    public func history(directory: String, cluster: ClusterOptions) async throws -> [RecordHead] {
        let d = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        return try await RecordStore(client: d.client, namespace: d.namespace, deployment: d.model.id).heads()
    }

    /// `rollback [REV]`: revision `revision` (default: the one the latest was made from, else the one before it)
    /// written into the directory and started as the next revision, with verb `rollback`; it returns when that
    /// start does (the old version answering). The directory's files that differ are kept as `.bak`.
    public func rollback(_ req: StartRequest, to revision: Int?) async throws -> (
        from: Int, to: Int, report: StartReport
    ) {
        let d = try await ConnectedDeployment.open(ctx, directory: req.directory, cluster: req.cluster)
        let store = RecordStore(client: d.client, namespace: d.namespace, deployment: d.model.id)
        let heads = try await store.heads()
        guard let latest = heads.last else {
            throw SoError(
                "the cluster holds no record of \(d.model.id) in namespace \(d.namespace): there is nothing to roll back to",
                hint: "a start writes the first revision")
        }
        let wanted = revision ?? latest.parent ?? (latest.revision - 1)
        guard let head = heads.first(where: { $0.revision == wanted }) else {
            let kept = heads.map { String($0.revision) }.joined(separator: ", ")
            throw SoError(
                "revision \(wanted) of \(d.model.id) is not in the cluster (it keeps \(kept))",
                hint: "see them with 'so deployment history'; pick one of those")
        }
        guard head.revision != latest.revision else {
            throw SoError(
                "revision \(wanted) is \(d.model.id)'s latest already",
                hint: "name an older one (see 'so deployment history')")
        }
        let record = try await store.read(head)
        let local = RecordFiles.step(in: d.model.directory, fs: ctx.fs)
        if local?.revision != latest.revision, !req.force {
            // The directory must be in step before it is replaced: its own changes would be lost otherwise.
            let files = try RecordFiles.collect(d.model.directory, fs: ctx.fs, secretKeys: d.model.secretKeys)
            guard DeploymentRecord.digest(files) == latest.digest else {
                throw SoError(
                    "\(d.model.directory) is out of step with \(d.model.id)'s record (revision \(latest.revision), written "
                        + "by \(latest.writer.description)); a rollback would replace its changes",
                    hint: "pull first (so deployment --dir \(d.model.directory) pull), or pass --force")
            }
        }
        try RecordFiles.write(record, to: d.model.directory, fs: ctx.fs, keepOld: true)
        // In step with the latest, as a directory that was just edited: its start writes revision latest + 1.
        try RecordFiles.writeStep(
            .init(deployment: d.model.id, revision: latest.revision, digest: latest.digest), in: d.model.directory,
            fs: ctx.fs)
        var start = req
        start.verb = "rollback"
        start.force = false
        ctx.say("rolling \(d.model.id) back to revision \(record.revision) (as revision \(latest.revision + 1))")
        let report = try await StartAction(ctx).run(start)
        return (latest.revision, record.revision, report)
    }
}
