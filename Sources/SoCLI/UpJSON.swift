import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct UpJSON: Encodable {
    var name, namespace, directory: String
    var created, ready: Bool
    /// The local checkout a workspace started from.
    var source: WorkspaceSource?
}
