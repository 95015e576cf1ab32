import Foundation
import SoDeploy

/// What every page is drawn with.
public struct PageContext: Sendable {
    public var now: Date
    /// The token every POST carries.
    public var csrf: String
    /// Whether the pages offer actions (`so dashboard --read-only`, or a team's page in a cluster: no).
    public var actions: Bool
    /// This machine's name: a deployment whose directory is here can be stopped and started from the page.
    public var hostName: String
    /// The GitHub loop's part of this dashboard (nil: not configured, no page of it and no link).
    public var github: GitHubSetup?
    public init(now: Date, csrf: String, actions: Bool, hostName: String) {
        self.now = now
        self.csrf = csrf
        self.actions = actions
        self.hostName = hostName
    }

    /// Whether the page may act on `l` (`DashboardActions.owns`): a directory on this machine only if this `so`
    /// made it (right under `$SO_HOME/deployments`, the deployment of `l`'s namespace); one elsewhere through the
    /// cluster's record of it.
    public var owns: @Sendable (DeploymentListing) -> Bool = { _ in true }

    /// Whether actions can act on `l`: the page offers them, and `owns` says yes.
    public func canAct(_ l: DeploymentListing) -> Bool {
        actions && owns(l)
    }
}
