import Foundation
import SoBasics
import SoKube
import SoStack
import SoActions
import SoDeploy

/// How `so down` ends a workspace that holds work: leave its branch in the local repository, merge it, or throw it away.
public enum DownChoice: String, Sendable, CaseIterable {
    case keep, merge, discard
}
