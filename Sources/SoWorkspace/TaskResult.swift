import Foundation
import SoBasics
import SoKube
import SoStack
import SoActions
import SoDeploy

public struct TaskResult: Sendable, Encodable {
    public var exitCode: Int32
    public var branch: String
    public var commits: Int
    public var committedLeftovers: Bool
    public var pushed: Bool
    public var pullRequest: String?
}
