import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so cleanup`: removes deployments whose TTL passed, whose directory is gone on this host, or older
/// than a duration — their namespace (with everything in it), their labelled PersistentVolumes, and the
/// directory when `so up` made it.
public struct CleanupAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(_ req: CleanupRequest) async throws -> [DeploymentListing] {
        guard req.expired || req.orphaned || req.olderThan != nil else {
            throw SoError.usage(
                "cleanup needs a reason to remove deployments",
                hint:
                    "pass --expired, --orphaned and/or --older-than DURATION, or --idle to stop idle workspaces (add --dry-run to see the list first)"
            )
        }
        let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
        let client = try ctx.connect(target.connection)
        let now = ctx.clock.now()
        let all = try await ListAction(ctx).list(client)
        let chosen = all.filter { d in
            if d.terminating { return false }
            if req.expired && d.expired(at: now) { return true }
            if req.orphaned && isOrphan(d) { return true }
            if let age = req.olderThan, let created = d.createdAt, now.timeIntervalSince(created) > age { return true }
            return false
        }
        for d in chosen {
            let why =
                req.expired && d.expired(at: now)
                ? "expired" : req.orphaned && isOrphan(d) ? "directory gone" : "older than the limit"
            ctx.say("\(req.dryRun ? "would remove" : "removing") \(d.name) (namespace \(d.namespace), \(why))")
        }
        if req.dryRun || chosen.isEmpty {
            if chosen.isEmpty {
                ctx.say("nothing to clean up (\(all.count) \(English.plural("deployment", all.count)) checked)")
            }
            return chosen
        }
        try await Remover(ctx: ctx, client: client).remove(chosen, wait: req.wait, timeout: req.timeout)
        return chosen
    }

    /// Only this host's own directories can be judged missing.
    func isOrphan(_ d: DeploymentListing) -> Bool {
        d.host == ctx.hostName && !ctx.fs.isDirectory(d.directory)
    }
}
