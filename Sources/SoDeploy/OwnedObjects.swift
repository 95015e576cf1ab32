import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// This deployment's objects as listed by label, indexed by "Kind/name"; what is no longer rendered
/// (volumes excepted: reported, never deleted) and the Jobs that exist.
struct OwnedObjects: Sendable {
    var live: [String: JSON] = [:]
    var pruneCandidates: [(ResourceType, String)] = []
    var jobs: Set<String> = []
    /// "Kind name" of volumes no longer rendered: kept with their data, and said so (`warnKeptVolumes`).
    var keptVolumes: [String] = []
}
