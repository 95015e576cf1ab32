import Foundation

/// What comes into a workspace claimed from a pool: the checkout `so up` ran in (a bundle), or a remote to clone.
enum ClaimedCheckout: Sendable {
    case bundle(CarryIn, WorkspaceSource)
    case remote(repo: String, ref: String)

    /// The checkout `plan` carries in, else the remote the user's `--config` (`given`) names; nil: neither, and no
    /// member is claimed.
    init?(_ plan: WorkspacePlan, given: [String: String]) {
        if let carry = plan.carry, let source = plan.source {
            self = .bundle(carry, source)
        } else if let repo = given["GIT_REPO"], !repo.isEmpty {
            self = .remote(repo: repo, ref: given["GIT_REF"] ?? "")
        } else {
            return nil
        }
    }

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
