import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoStack

/// `workspace: {pool: N}` in a workspace's spec (a stack's `spec-defaults`, usually): `so up` keeps a warm pool of
/// N workspaces of the stack with its own options, named after the stack, as `so pool create` would by hand. The
/// first `up` makes it (members made without waiting), an `up` that finds another N resizes it, and each claim
/// refills it (`PoolClaim`); once the stack changes (N with it), its members go and it is made again. A pool of that
/// name made by hand, or with other options, is left as it is, saying so.
struct PoolFromSpec {
    let ctx: SoContext

    /// Keeps the pool for the workspace `up` just made in `dir` (claimed from a pool when `claimed`).
    func keep(_ req: UpRequest, dir: String, source: WorkspaceSource?, claimed: Bool) async throws {
        // Its spec alone (the whole deployment is not read again for one key).
        let spec = try Spec.load(
            Path.join(dir, "spec.yml"), fs: ctx.fs, diagnostics: DiagnosticSink.dropped("the spec again"))
        guard let size = spec.workspace?.pool, size > 0 else { return }
        let name = NameRules.dnsLabel(Path.basename(req.stack))
        let action = PoolAction(ctx)
        guard var record = try await PoolStore.open(ctx, req.cluster).load(name) else {
            try await make(req, name: name, size: size, source: source)
            return
        }
        let mine = PoolRecord.stackKey(ctx, req.stack)
        // The pool is the cluster's: one another machine made of its copy of the stack follows that copy. Only the
        // stack it names, changed, makes it again; a copy elsewhere that differs leaves it as it is.
        let (_, stack) = try record.stackHere(ctx, copy: record.stack == mine ? nil : mine)
        let changed = try record.changed(stack, fs: ctx.fs)
        if record.stack != mine, !changed.isEmpty {
            ctx.say(
                "pool \(name) is not kept for the spec's workspace.pool: it was made of \(record.stack), whose files "
                    + "differ from \(mine)'s (\(changed.joined(separator: ", ")))")
            return
        }
        if record.fromSpec == true, !changed.isEmpty {
            // The stack the spec's pool follows changed (its size with it, perhaps): its members, which hold no
            // work, go, and the pool is made again from the stack as it is.
            try await action.remove(name, cluster: req.cluster)
            try await make(req, name: name, size: size, source: source)
            return
        }
        if let why = PoolClaim(ctx: ctx).mismatch(record, req) {
            ctx.say("pool \(name) is not kept for the spec's workspace.pool: \(why)")
            return
        }
        if record.size != size {
            record.size = size
            record.stack = mine
            _ = try await action.create(record, cluster: req.cluster)
            ctx.say("pool \(name): resized to \(size) (the spec's workspace.pool)")
        } else if !claimed {
            // A cold up: the pool was empty, or members went; the claim's refill does this on the warm way.
            _ = try await action.fill(record, cluster: req.cluster, stack: record.stack == mine ? nil : mine)
        }
    }

    /// Makes the pool `name` of `size` with this up's options, less its own name and branch; the repository it
    /// came from (the checkout's origin, or the remote it cloned) stays in the members' egress, so the next up
    /// from the same repository fits.
    func make(_ req: UpRequest, name: String, size: Int, source: WorkspaceSource?) async throws {
        var record = PoolRecord(name: name, stack: req.stack, size: size)
        func key(_ arg: String) -> String { String(arg.prefix { $0 != "=" }) }
        record.config =
            req.config.filter { !PoolClaim.perWorkspace.contains(key($0)) || key($0) == "GIT_REPO" }
            + (source.map { $0.origin.isEmpty ? [] : ["GIT_ORIGIN=\($0.origin)"] } ?? [])
        record.with = req.with
        record.agent = req.agent
        record.fromSpec = true
        _ = try await PoolAction(ctx).create(record, cluster: req.cluster)
        ctx.say(
            "pool \(name): \(size) warm \(English.plural("workspace", size)) on the way (the spec's workspace.pool); "
                + "the next 'so up' claims one")
    }
}
