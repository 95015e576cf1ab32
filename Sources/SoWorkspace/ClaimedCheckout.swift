import Foundation

/// What comes into a workspace claimed from a pool: the checkout `so up` ran in (a bundle), or a remote to clone.
enum ClaimedCheckout: Sendable {
    case bundle(CarryIn, WorkspaceSource)
    case remote(repo: String, ref: String)

    /// The repository the member's egress must reach.
    var reach: PoolClaim.Reach {
        switch self {
        case .bundle(_, let source): PoolClaim.Reach(key: "GIT_ORIGIN", url: source.origin)
        case .remote(let repo, _): PoolClaim.Reach(key: "GIT_REPO", url: repo)
        }
    }

    var source: WorkspaceSource? {
        if case .bundle(_, let source) = self { return source }
        return nil
    }
}
