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

    /// Whether `o` is live as rendered and need not go out again (start's unchanged-test,
    /// `KubeObject.isUnchanged`); a volume its claim released goes out again, to be released to the claim start
    /// makes in `namespace` (`KeptVolume`).
    func holds(_ o: KubeObject, namespace: String) -> Bool {
        guard let live = live[o.kind + "/" + o.name], o.isUnchanged(in: live) else { return false }
        return !(o.isKind(.persistentVolume) && KeptVolume.isReleasedByItsClaim(live, namespace: namespace))
    }
}
