import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoActions
import SoDeploy

public struct WorkspaceFetchResult: Sendable, Encodable {
    public var repository: String
    public var branch: String
    public var commit: String
    public var commits: Int
}
