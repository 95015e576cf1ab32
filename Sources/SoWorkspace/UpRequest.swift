import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

public struct UpRequest: Sendable {
    public var stack: String
    public var name: String?
    public var config: [String] = []
    public var with: [String]?
    public var ttl: Double?
    public var preview: Int?
    public var wait = true
    public var timeout: Double = 300
    public var progress: ProgressMode = .auto
    public var cluster = ClusterOptions()
    /// Write nothing and change nothing on the cluster; report what would be created and applied.
    public var dryRun = false
    /// The checkout a workspace starts from when no `GIT_REPO` is given (default: the one the current
    /// directory is in), and whether its uncommitted changes go in too.
    public var from: String?
    public var includeUncommitted = false
    /// The agent CLI of a workspace stack (an entry of its `agents:` table); nil: the stack's default.
    public var agent: String?
    /// `--idle DURATION`: the spec's `workspace.idle`.
    public var idle: String?
    /// Made as a member of this warm pool (`so pool`): its clone waits for the checkout a claim carries in.
    public var poolMember: String?
    /// The pool to claim a member from (nil: one made of the same stack and options, when there is one);
    /// `noPool`: never claim.
    public var pool: String?
    public var noPool = false
    public init(stack: String) { self.stack = stack }
}
