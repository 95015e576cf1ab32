import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// Start's part in the deployment's record (`RecordStore`), under the deployment's Lease:
/// - before anything is applied: the directory is compared with the cluster's latest revision. The same files:
///   nothing is written. A directory in step with the latest (it remembers that revision, `RecordFiles.stepFile`):
///   its files become the next revision. Anything else is a stale directory, refused (unless `--force`);
/// - after the wait: how the start ended is set on the revision (`started`, `applied`, `failed: …`). A start
///   killed before that leaves `applying`, which the next start names and takes over: nothing stays pending.
struct RecordStep {
    let ctx: SoContext
    let client: ClusterClient
    let model: DeploymentModel
    let namespace: String
    let connection: ClusterConnection
    let req: StartRequest

    struct Begun: Sendable {
        let store: RecordStore
        /// The revision this start runs as: the one written, or the latest when the files are the same.
        let head: RecordHead
        let wrote: Bool
        /// What follows a revision written and need not precede the apply (`begin`'s `deferTail`): the old revisions
        /// pruned and who wrote last on the Namespace. Awaited by `end`.
        var tail: Task<Void, Never>? = nil
    }

    var store: RecordStore { RecordStore(client: client, namespace: namespace, deployment: model.id) }

    /// The stale check and, when the files changed, the next revision written. `existing`: the Namespace as it
    /// stood (nil when this start created it: no record can be there yet); `heads`: the record's revisions, as
    /// listed beside the start's first read. `done`: the result of a verb that is over once its revision is
    /// written (a claim, `deploy create --update`); `always`: a verb that changes who holds the deployment, not its
    /// files (a claim), whose revision is written whatever the latest holds. `user`: the writer as the API server
    /// names it, asked for beforehand (`whoAmI`), else asked here when a revision is written. `deferTail`: the
    /// prune and the Namespace's annotation go on beside what the caller does next, and `end` waits for them.
    func begin(
        existing: JSON?, heads: [RecordHead], done: String? = nil, always: Bool = false, user: String? = nil,
        deferTail: Bool = false
    ) async throws -> Begun {
        let dir = model.directory
        let files = try RecordFiles.collect(dir, fs: ctx.fs, secretKeys: model.secretKeys)
        let digest = DeploymentRecord.digest(files)
        let latest = heads.last
        let step = RecordFiles.step(in: dir, fs: ctx.fs)
        if let latest, latest.result == RecordHead.applying {
            ctx.diagnostics.warn(
                "revision \(latest.revision) of \(model.id)'s record (\(latest.verb) by \(latest.writer.description) at "
                    + "\(Timestamps.rfc3339(latest.time))) did not finish: its writer stopped before the end; "
                    + "this start takes over")
        }
        // What this machine copies from its environment stays as the directory had it (`--copy-secret-env`: all).
        let copies = req.copySecretEnv || step?.deployment != model.id ? nil : step?.copies
        if let latest, latest.digest == digest, !always {
            var now = RecordFiles.Step(deployment: model.id, revision: latest.revision, digest: digest, copies: copies)
            now.fromRecord = step?.fromRecord
            if step != now { try RecordFiles.writeStep(now, in: dir, fs: ctx.fs) }
            return Begun(store: store, head: latest, wrote: false)
        }
        if let latest, step?.deployment != model.id || step?.revision != latest.revision {
            guard req.force else { throw stale(latest, step: step) }
            ctx.diagnostics.warn(
                "--force: this directory replaces revision \(latest.revision) of the record (\(latest.verb) by "
                    + "\(latest.writer.description) at \(Timestamps.rfc3339(latest.time))) as revision \(latest.revision + 1)"
            )
        }
        // The latest revision's files, for what changed; with --force a damaged one is written over.
        let parentFiles =
            req.force
            ? try? await latest.asyncMap { try await store.read($0).files }
            : try await latest.asyncMap { try await store.read($0).files }
        let writer: String
        if let user { writer = user } else { writer = await whoAmI() }
        let record = DeploymentRecord(
            deployment: model.id, revision: (latest?.revision ?? 0) + 1, parent: latest?.revision,
            writer: .init(user: writer, host: ctx.hostName), time: ctx.clock.now(), verb: req.verb,
            pool: existing.flatMap {
                $0.annotations[DeploymentNames.Annotation.claimedFrom]
                    ?? $0.annotations[DeploymentNames.Annotation.pool]
            }, files: files)
        let head = try await store.write(
            record, changed: DeploymentRecord.changes(from: parentFiles, to: files), result: done ?? RecordHead.applying
        )
        var now = RecordFiles.Step(deployment: model.id, revision: record.revision, digest: digest, copies: copies)
        now.fromRecord = step?.fromRecord
        try RecordFiles.writeStep(now, in: dir, fs: ctx.fs)
        ctx.verbose("recorded revision \(record.revision) of \(model.id) in the cluster (\(head.what))")
        guard deferTail else {
            await afterWriting(record, head: head, heads: heads)
            return Begun(store: store, head: head, wrote: true)
        }
        return Begun(
            store: store, head: head, wrote: true, tail: Task { await afterWriting(record, head: head, heads: heads) })
    }

    /// After revision `head` is written: the old revisions pruned and who wrote last on the Namespace. Best effort:
    /// the revision is in place; the next start prunes, and `deployment list` says an older writer meanwhile.
    /// The two at once: neither reads what the other writes (a claim's `up` waits for both, one round trip fewer).
    func afterWriting(_ record: DeploymentRecord, head: RecordHead, heads: [RecordHead]) async {
        async let pruned: Void = pruneOld(heads + [head], orphans: !heads.isEmpty)
        // Who wrote last, on the Namespace too: `deployment list` reads it there (one list for every deployment).
        do {
            try await client.annotate(
                .namespace, name: namespace, namespace: nil,
                [
                    (RecordStore.Key.revision, String(record.revision)), (RecordStore.Key.user, record.writer.user),
                    (RecordStore.Key.host, record.writer.host), (RecordStore.Key.time, Timestamps.rfc3339(record.time)),
                ])
        } catch { ctx.verbose("the namespace does not say who wrote last: \(error)") }
        await pruned
    }

    /// Old revisions go after the new one is in place; a failure here loses nothing (the next start prunes).
    func pruneOld(_ heads: [RecordHead], orphans: Bool) async {
        let keep = req.history ?? model.spec.recordHistory ?? RecordStore.defaultHistory
        do { try await store.prune(keep: keep, heads: heads, orphans: orphans) } catch {
            ctx.verbose("the record's old revisions were not pruned: \(error)")
        }
    }

    /// Sets how the start ended on its revision, when that changes it. Best effort: the record is written; a
    /// result not set reads as interrupted, and the next start sets its own.
    func end(_ begun: Begun, result: String) async {
        await begun.tail?.value
        guard begun.head.result != result else { return }
        do {
            if try await !begun.store.finish(begun.head, result: result) {
                ctx.verbose("the record's revision \(begun.head.revision) changed meanwhile; its result was not set")
            }
        } catch {
            ctx.verbose("the record's revision \(begun.head.revision) kept its result: \(error)")
        }
    }

    func stale(_ latest: RecordHead, step: RecordFiles.Step?) -> SoError {
        let mine =
            step.map {
                $0.deployment == model.id ? "was last in step with revision \($0.revision)" : "is another deployment's"
            }
            ?? "has never been in step with it"
        return SoError(
            "\(model.directory) is out of step with \(model.id)'s record in the cluster: revision \(latest.revision) was "
                + "written by \(latest.writer.description) at \(Timestamps.rfc3339(latest.time)) (\(latest.verb)); "
                + "this directory \(mine)",
            hint:
                "take the cluster's with 'so deployment \(Self.target(ctx, model.directory)) pull', or write this directory as "
                + "revision \(latest.revision + 1) with 'start --force'")
    }

    /// How a command names the directory `dir`: `--name N` for `$SO_HOME/deployments/N` (as `so up` made it),
    /// else `--dir PATH`.
    static func target(_ ctx: SoContext, _ dir: String) -> String {
        let name = Path.basename(dir)
        // A name that is not a deployment's is no `--name`: the path it is.
        return (try? ctx.namedDeployment(name)) == dir ? "--name \(name)" : "--dir \(dir)"
    }

    /// The user as the API server names it (a SelfSubjectReview, what `kubectl auth whoami` asks), else the
    /// kubeconfig's user entry, else "unknown".
    func whoAmI() async -> String { await Self.whoAmI(client, connection: connection) }

    /// Who the API server says `client` is (a SelfSubjectReview), else the kubeconfig's user name.
    static func whoAmI(_ client: ClusterClient, connection: ClusterConnection) async -> String {
        let review = KubeObject(.selfSubjectReview, name: "")
        if let answer = try? await client.create(review, fieldManager: "so"),
            let user = answer.at("status", "userInfo", "username")?.string, !user.isEmpty
        {
            return user
        }
        return connection.userName ?? "unknown"
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ body: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await body(self)
    }
}
