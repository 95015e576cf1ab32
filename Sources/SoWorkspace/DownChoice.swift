import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// How `so down` ends a workspace that holds work: leave its branch in the local repository, merge it, or throw it away.
public enum DownChoice: String, Sendable, CaseIterable {
    case keep, merge, discard
}
