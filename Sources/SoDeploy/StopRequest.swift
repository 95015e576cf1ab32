import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct StopRequest: Sendable {
    public var directory: String
    public var cluster: ClusterOptions
    public var deleteVolumes: Bool
    public var deleteNamespace: Bool
    public var timeout: Double
    /// List what would be deleted; delete nothing.
    public var dryRun: Bool
    /// Delete a workspace's volume even when its checkout holds work that is not pushed (`WorkGuard`).
    public var discard: Bool
    /// What stands between `--delete-volumes` and work not yet taken out of a volume (SoWorkspace's `WorkGuard`
    /// for a deployment that may be a workspace); nil only where the caller checked already (`so down`).
    /// No default: every caller says which.
    public var volumeGuard: VolumeGuard?
    /// With `deleteNamespace`: wait until the namespace is gone (Kubernetes takes about 5 s for an empty one);
    /// false returns once its deletion is accepted and the deployment's objects are gone (`so down`: a start of
    /// the same namespace waits for it).
    public var waitForNamespace = true

    public init(
        directory: String, cluster: ClusterOptions = ClusterOptions(performClusterManagement: false),
        deleteVolumes: Bool = false,
        deleteNamespace: Bool = false, timeout: Double = 120, dryRun: Bool = false, discard: Bool = false,
        volumeGuard: VolumeGuard?
    ) {
        self.volumeGuard = volumeGuard
        self.dryRun = dryRun
        self.discard = discard
        self.directory = directory
        self.cluster = cluster
        self.deleteVolumes = deleteVolumes
        self.deleteNamespace = deleteNamespace
        self.timeout = timeout
    }
}
