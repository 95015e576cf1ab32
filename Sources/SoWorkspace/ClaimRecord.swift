import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// The claim's revision of the record (`RecordAction.recordClaim`), written beside the hand-over from the deployment
/// the hand-over opened (the claimed workspace's files read once, not once more for the record), after the workspace's
/// name is on its Namespace (`Claimed.named`). Under the claim's Lease like the rest of the claim, and awaited before
/// `up` returns (`wait`): never left behind by a process that exits. Not started when the hand-over never opened the
/// workspace (a claim that failed before it goes, with its revision).
final class ClaimRecord: @unchecked Sendable {
    private let ctx: SoContext
    private let claimed: PoolClaim.Claimed
    private let lock = NSLock()
    private var task: Task<Void, Error>?

    init(_ ctx: SoContext, _ claimed: PoolClaim.Claimed) {
        self.ctx = ctx
        self.claimed = claimed
    }

    /// The revision written from `model` (the claimed workspace's files, adopted), beside what the caller does next.
    func start(_ model: DeploymentModel) {
        let (ctx, named, client, connection) = (ctx, claimed.named, claimed.client, claimed.connection)
        lock.withLock {
            guard task == nil else { return }
            task = Task {
                guard let namespace = try await named?.value, let client, let connection else { return }
                await RecordAction(ctx).recordClaim(
                    model: model, namespace: namespace, client: client, connection: connection)
            }
        }
    }

    /// The Namespace named (its failure is the claim's) and the revision, if started, written.
    func wait() async throws {
        try await lock.withLock { task }?.value
        _ = try await claimed.named?.value
        ctx.phase("claim: Namespace named, revision written")
    }
}
