import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoActions
import SoDeploy

public struct PushResult: Sendable, Encodable {
    public var branch: String
    public var commit: String
    public var origin: String
    public var commits: Int
    public var committed: Bool
    public var uncommitted: Int
}
