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
    public init(now: Date, csrf: String, actions: Bool, hostName: String) {
        self.now = now
        self.csrf = csrf
        self.actions = actions
        self.hostName = hostName
    }

    /// Whether this `so` made `l`'s directory (`DashboardActions.owns`: right under `$SO_HOME/deployments`, the
    /// deployment of `l`'s namespace); a page offers no action elsewhere.
    public var owns: @Sendable (DeploymentListing) -> Bool = { _ in true }

    /// Whether actions can act on `l`: its namespace says its directory is on this machine (a namespace that names
    /// no host is not taken for this one), and this `so` made that directory.
    public func canAct(_ l: DeploymentListing) -> Bool {
        actions && !l.host.isEmpty && l.host == hostName && owns(l)
    }
}
