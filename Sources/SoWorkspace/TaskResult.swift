import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

public struct TaskResult: Sendable, Encodable {
    public var exitCode: Int32
    public var branch: String
    public var commits: Int
    public var committedLeftovers: Bool
    public var pushed: Bool
    public var pullRequest: String?
}
