import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

public struct CreateResult: Sendable {
    public var directory: String
    public var deployment: DeploymentFile
    public var changed: [String] = []
    public var added: [String] = []
    public var removed: [String] = []
}
