import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

public struct PushResult: Sendable, Encodable {
    public var branch: String
    public var commit: String
    public var origin: String
    public var commits: Int
    public var committed: Bool
    public var uncommitted: Int
}
