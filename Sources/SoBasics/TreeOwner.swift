import Foundation

/// What makes a directory tree `so`'s to delete. Every recursive delete names one.
public enum TreeOwner: Sendable {
    /// A scratch directory `so` made with `temporaryDirectory(beside:prefix:)`: `.<prefix>.<pid>.XXXXXX`
    /// (or the older `.<prefix>.XXXXXX`).
    case scratch(prefix: String)
    /// `<root>/<label>`: a DNS-1123 label directly under `root` (`$SO_HOME/deployments`), symlinks resolved.
    case labelledChild(of: String)
    /// A directory `vouches` for (given its real path), e.g. one whose `deployment.yml` names the deployment
    /// being removed; `what` says what it must be, for the refusal.
    case vouched(what: String, vouches: @Sendable (String) -> Bool)
}
