import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

public struct WorkspaceCommit: Sendable, Equatable, Encodable {
    public var commit: String
    public var author: String
    public var date: String
    public var subject: String
}
