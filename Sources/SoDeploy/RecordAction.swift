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
        let namespace: String
        var heads = try await client.list(.secret, namespace: name, labelSelector: "\(RecordStore.Key.part)=head")
        if heads.isEmpty {
            // A workspace claimed from a pool lives in its member's namespace, which names it by its directory.
            guard let claimed = try await claimedNamespace(name, client: client) else { return nil }
            namespace = claimed
            heads = try await client.list(.secret, namespace: claimed, labelSelector: "\(RecordStore.Key.part)=head")
        } else {
            namespace = name
        }
        let ids = Set(heads.compactMap { $0.labels[RecordStore.Key.of] })
        guard !ids.isEmpty else { return nil }
        let id: String
        if ids.count == 1, let only = ids.first {
            id = only
        } else if ids.contains(name) {
            id = name
        } else {
            throw SoError(
                "namespace \(namespace) holds the records of several deployments (\(ids.sorted().joined(separator: ", ")))",
                hint: "use the directory of the one you mean: so deployment --dir DIR …")
        }
        let store = RecordStore(client: client, namespace: namespace, deployment: id)
        guard let latest = try await store.heads().last else { return nil }
        return (store, latest)
    }

    /// The namespace of the workspace `name` claimed from a warm pool (its member's, whose directory the claim
    /// renamed to `name`); nil when there is none. Two machines' workspaces of one name are not guessed between.
    func claimedNamespace(_ name: String, client: ClusterClient) async throws -> String? {
        let found = try await client.list(
            .namespace, namespace: nil, labelSelector: DeploymentNames.Label.managedBySoSelector
        ).filter {
            $0.annotations[DeploymentNames.Annotation.claimedFrom] != nil
                && $0.annotations[DeploymentNames.directoryAnnotation].map(Path.basename) == name
        }
        guard found.count < 2 else {
            let each = found.map { "\($0.name) (\($0.annotations[DeploymentNames.directoryAnnotation] ?? "?"))" }
            throw SoError(
                "several workspaces named '\(name)' were claimed from pools: \(each.sorted().joined(separator: ", "))",
                hint: "name the one you mean by its namespace: so deployment --name NAMESPACE …")
        }
        return found.first?.name
    }

    /// A claim's revision: the claimed member's files, now the workspace's in `dir`, written as the next revision
    /// with verb `claim` by this writer, so `history` and `deployment list` say who holds it since when.
    /// `namespace`: the Namespace as the claim patched it (its pool). Best effort: a claim whose revision is not
    /// written is the claimer's all the same (said with --verbose), and the workspace's next start writes one.
    public func recordClaim(dir: String, namespace: JSON, client: ClusterClient, connection: ClusterConnection) async {
        do {
            let model = try DeploymentLoader.load(
                dir, fs: ctx.fs, diagnostics: DiagnosticSink.dropped("a claimed workspace's files (its start warns)"))
            await recordClaim(model: model, namespace: namespace, client: client, connection: connection)
        } catch {
            ctx.verbose("the claim of \(Path.basename(dir)) is not in its record: \(error)")
        }
    }

    /// `recordClaim(dir:…)` of the claimed workspace's files already loaded (`model`, read after they became the
    /// workspace's).
    public func recordClaim(
        model: DeploymentModel, namespace: JSON, client: ClusterClient, connection: ClusterConnection
    )
        async
    {
        let dir = model.directory
        do {
            ctx.phase("claim record: started")
            var req = StartRequest(directory: dir)
            req.verb = "claim"
            let step = RecordStep(
                ctx: ctx, client: client, model: model, namespace: namespace.name, connection: connection, req: req)
            // A claim always writes a revision: who writes it is asked beside the revisions' list.
            async let user = step.whoAmI()
            let heads = try await step.store.heads()
            _ = try await step.begin(
                existing: namespace, heads: heads, done: "claimed", always: true, user: await user)
            ctx.phase("claim record: revision written")
        } catch {
            ctx.verbose("the claim of \(Path.basename(dir)) is not in its record: \(error)")
        }
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
        guard
            let made = try await materialize(
                name: name, client: try ctx.connect(target.connection), foundIn: (target, cluster))
        else {
            throw SoError(
                "no deployment named '\(name)' on this host (\(dir) does not exist), and the cluster (context "
                    + "\(target.connection.contextName)) holds no record of it in namespace \(name)",
                hint: "see what there is: so deployment list; make one: so up STACK --name \(name)")
        }
        return made
    }

    /// A directory made from a record reaches the cluster its files name on this machine (`deploy-to`, the kind
    /// cluster's name: `ClusterTargets`), and those files are whoever wrote them's: a revision saying `deploy-to: k8s`
    /// found in the host's kind cluster would send every later verb to `$KUBECONFIG`'s current context, another
    /// cluster. The cluster it reaches must be the one it was found in (the same API server), or it is refused.
    func samePlace(_ dir: String, name: String, foundIn: ClusterTarget, options: ClusterOptions) async throws {
        var quiet = ctx
        quiet.options.quiet = true
        quiet.diagnostics = DiagnosticSink.dropped("where a directory from the record reaches")
        var look = options
        look.performClusterManagement = false
        let model = try RenderAction(quiet).model(dir)
        let there: ClusterTarget?
        do { there = try await ClusterTargets(ctx: quiet).find(model, look, allowCreate: false) } catch {
            there = nil
        }
        let found = foundIn.connection
        guard let there, there.connection.server == found.server else {
            let elsewhere =
                there.map { "context \($0.connection.contextName) at \($0.connection.server)" } ?? "no cluster"
            throw SoError(
                "the record of \(name) was found on context \(found.contextName) at \(found.server), but its files "
                    + "(deploy-to: \(model.deployTo.rawValue)) would have this machine's verbs reach \(elsewhere)",
                hint:
                    "a record does not choose the cluster: name it with --kubeconfig/--context (or SO_KUBECONFIG), "
                    + "and see the revision's files with so deployment --name \(name) diff",
                exitCode: RecordGate.refused)
        }
    }

    /// Whether the cluster holds a record of the deployment `name` (a `down` that ran leaves none).
    public func exists(name: String, client: ClusterClient) async throws -> Bool {
        try await latestNamed(name, client: client) != nil
    }

    /// `materialize(name:cluster:)` over `client`; nil when the cluster holds no record of `name`. `into`: another
    /// directory than `$SO_HOME/deployments/NAME` (a pool's member claimed as the workspace of another name).
    /// `foundIn`: the cluster `client` reaches and the options it was chosen with; the directory made must reach the
    /// same one (`samePlace`).
    public func materialize(
        name: String, client: ClusterClient, into: String? = nil,
        foundIn: (target: ClusterTarget, options: ClusterOptions)? = nil
    ) async throws -> String? {
        let dir = try into ?? ctx.namedDeployment(name)
        guard let (store, latest) = try await latestNamed(name, client: client) else { return nil }
        async let origin = origin(store)
        let record = try await store.read(latest)
        let made = !ctx.fs.exists(dir)
        try RecordGate(ctx).admit(record, origin: try await origin, into: dir, address: "--name \(name)")
        if let foundIn {
            do { try await samePlace(dir, name: name, foundIn: foundIn.target, options: foundIn.options) } catch {
                // What this call made goes again (nothing half-written is left to trust).
                if made { try? ctx.fs.removeOwnedTree(dir, owner: .labelledChild(of: Path.dirname(dir))) }
                throw error
            }
        }
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
        async let origin = origin(store)
        let record = try await store.read(latest)
        try RecordGate(ctx).admit(record, origin: try await origin, into: dir, keepOld: true, strict: true)
        return dir
    }

    /// Where `store`'s revisions are found: its namespace, its deployment, and the namespace's Pod Security level
    /// (one read of the Namespace, made beside the record's). The deployment is the one a Namespace `so` made names
    /// (its labels are written by whoever may write Namespaces); the record's Secrets' label is their writer's, and
    /// names it only in a Namespace `so` did not make.
    func origin(_ store: RecordStore) async throws -> RecordOrigin {
        let ns = try await store.client.get(.namespace, name: store.namespace, namespace: nil)
        let owner = ns.flatMap { n in
            n.labels[DeploymentNames.Label.managedBy] == "so" ? n.labels[DeploymentNames.Label.instance] : nil
        }
        return RecordOrigin(
            namespace: store.namespace, deployment: owner ?? store.deployment,
            podSecurity: ns?.labels[RecordOrigin.podSecurityLabel])
    }

    /// `deploy create --update` of a directory that has been in step with the cluster's record: its new files
    /// written as the next revision (verb `update`, result `not started`) under the deployment's Lease, so a
    /// teammate's directory is behind it and `history` shows it; its next start runs as that revision. Best
    /// effort: with no cluster at hand, or a record that moved on, the update is this directory's alone (said),
    /// and its next start records it or is refused as stale.
    public func recordUpdate(dir: String, cluster: ClusterOptions = ClusterOptions()) async {
        guard RecordFiles.step(in: dir, fs: ctx.fs) != nil else { return }
        do {
            let d = try await ConnectedDeployment.open(ctx, directory: dir, cluster: cluster)
            // A deployment whose namespace is gone has no record to be in step with (its next start writes one).
            guard let existing = try await d.client.get(.namespace, name: d.namespace, namespace: nil) else { return }
            var req = StartRequest(directory: dir)
            req.verb = "update"
            let step = RecordStep(
                ctx: ctx, client: d.client, model: d.model, namespace: d.namespace, connection: d.target.connection,
                req: req)
            let begun = try await DeploymentLock.holding(d.lock(timeout: 60), waiting: 30) {
                try await step.begin(existing: existing, heads: try await step.store.heads(), done: "not started")
            }
            if begun.wrote {
                ctx.say(
                    "  recorded in the cluster as revision \(begun.head.revision) of \(d.model.id) (not started yet: "
                        + "start applies it)")
            }
        } catch {
            ctx.diagnostics.warn(
                "the update is in \(dir) only, not in the cluster's record: \(StartAction.firstLine(error))",
                hint: "its next start records it (or says why it cannot)")
        }
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
        async let origin = origin(store)
        let record = try await store.read(latest)
        // Whoever wrote it (the record's writer is a label): checked in a scratch copy before a file of it is written
        // here; a refused revision leaves the directory as it was.
        let changed = try RecordGate(ctx).admit(
            record, origin: try await origin, into: d.model.directory, keepOld: true,
            copies: RecordTrust.copies(d.model.directory, fs: ctx.fs), address: "--dir \(directory)")
        return Pulled(
            directory: d.model.directory, revision: record.revision, writer: record.writer, time: record.time,
            changed: changed)
    }

    /// What the record's gate refuses in the cluster's latest revision of a deployment, shown before anything is
    /// written (`so deployment diff`): the revision as a refusal names it, and each finding (file, key, what).
    public struct Review: Sendable {
        public var revision: Int
        public var writer: DeploymentRecord.Writer
        /// As the refusal names it: "revision R of ID (VERB by USER@HOST, as it says)".
        public var described: String
        public var findings: [RecordFinding]
    }

    /// The gate's view of the cluster's latest revision: of `directory`'s deployment when it is given (nil when the
    /// directory is in step with it already), else of the deployment `--name name` finds (against
    /// `$SO_HOME/deployments/NAME`, which is not written). Nil when the cluster holds no record.
    public func review(name: String?, directory: String?, cluster: ClusterOptions) async throws -> Review? {
        let store: RecordStore
        let latest: RecordHead
        let dir: String
        if let directory {
            let d = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
            store = RecordStore(client: d.client, namespace: d.namespace, deployment: d.model.id)
            guard let head = try await store.heads().last else { return nil }
            guard RecordFiles.step(in: d.model.directory, fs: ctx.fs)?.revision != head.revision else { return nil }
            (latest, dir) = (head, d.model.directory)
        } else if let name {
            let target = try await ClusterTargets(ctx: ctx).shared(cluster)
            guard let found = try await latestNamed(name, client: try ctx.connect(target.connection)) else {
                return nil
            }
            (store, latest, dir) = (found.0, found.1, try ctx.namedDeployment(name))
        } else {
            return nil
        }
        async let origin = origin(store)
        let record = try await store.read(latest)
        let place = try await origin
        return Review(
            revision: record.revision, writer: record.writer,
            described: RecordGate.describe(record, origin: place),
            findings: try RecordGate(ctx).review(record, origin: place, into: dir))
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
        let copies = RecordTrust.copies(d.model.directory, fs: ctx.fs)
        // An old revision is a revision of the record like any: this machine's own only when it started those files.
        try RecordGate(ctx).admit(
            record, origin: try await origin(store), into: d.model.directory, keepOld: true, copies: copies,
            address: "--dir \(req.directory)")
        // In step with the latest, as a directory that was just edited: its start writes revision latest + 1.
        var step = RecordFiles.Step(
            deployment: d.model.id, revision: latest.revision, digest: latest.digest, copies: copies)
        let admitted = RecordFiles.step(in: d.model.directory, fs: ctx.fs)
        (step.made, step.fromRecord) = (admitted?.made, admitted?.fromRecord)
        try RecordFiles.writeStep(step, in: d.model.directory, fs: ctx.fs)
        var start = req
        start.verb = "rollback"
        start.force = false
        ctx.say("rolling \(d.model.id) back to revision \(record.revision) (as revision \(latest.revision + 1))")
        let report = try await StartAction(ctx).run(start)
        return (latest.revision, record.revision, report)
    }
}
