import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// `so deployment apply`: the workspace's changes written into a local working tree, uncommitted.
public struct ApplyResult: Sendable, Encodable {
    public var repository: String
    /// Changed files, as `git apply --numstat` names them.
    public var files: [String]
    /// The workspace's commits and whether uncommitted changes were among what was applied.
    public var commits: Int
    public var uncommitted: Bool
}
