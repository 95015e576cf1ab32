import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DiffJSON: Encodable {
    var state: WorkspaceState
    var patch: String
}
