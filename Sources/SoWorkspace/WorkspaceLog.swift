import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// `so deployment log`: the workspace's commits since it started, newest first, and what is not committed.
public struct WorkspaceLog: Sendable, Encodable {
    public var branch: String
    public var base: String
    public var commits: [WorkspaceCommit]
    public var uncommitted: [String]
}
