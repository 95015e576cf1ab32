import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

public struct WorkspaceFetchResult: Sendable, Encodable {
    public var repository: String
    public var branch: String
    public var commit: String
    public var commits: Int
}
