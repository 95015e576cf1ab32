import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// `so deployment merge` (and `so down --merge`): the workspace's branch merged into the current branch.
public struct MergeResult: Sendable, Encodable {
    public var repository: String
    /// The local branch the work arrived on (agent/NAME), and the branch it was merged into.
    public var branch: String
    public var into: String
    public var commit: String
    public var commits: Int
    public var merged: Bool
}
