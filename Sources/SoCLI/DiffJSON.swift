import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

struct DiffJSON: Encodable {
    var state: WorkspaceState
    var patch: String
}
