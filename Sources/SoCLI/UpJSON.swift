import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

struct UpJSON: Encodable {
    var name, namespace, directory: String
    var created, ready: Bool
    /// The local checkout a workspace started from.
    var source: WorkspaceSource?
}
