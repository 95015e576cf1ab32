import Foundation
import SoBasics
import SoKube
import SoStack
import SoActions
import SoDeploy

public struct WorkspaceCommit: Sendable, Equatable, Encodable {
    public var commit: String
    public var author: String
    public var date: String
    public var subject: String
}
