import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct ClusterTarget: Sendable {
    public var connection: ClusterConnection
    /// The kind cluster in use, when `so` manages it through the kind CLI.
    public var kindCluster: String?
    public var createdCluster = false
    /// kind's context was read from the user's kubeconfig; if it turns out stale, `kindCLITarget` is the
    /// authoritative way in.
    public var fromUserKubeconfig = false
    /// The kubeconfig file named for this cluster (`--kubeconfig`, `SO_KUBECONFIG`, `kubeconfig.yml`); nil when
    /// it is the user's own (`$KUBECONFIG`, else `~/.kube/config`), which kubectl reads by itself.
    public var kubeconfigFile: String?

    public init(
        connection: ClusterConnection, kindCluster: String?, createdCluster: Bool = false,
        fromUserKubeconfig: Bool = false,
        kubeconfigFile: String? = nil
    ) {
        self.connection = connection
        self.kindCluster = kindCluster
        self.createdCluster = createdCluster
        self.fromUserKubeconfig = fromUserKubeconfig
        self.kubeconfigFile = kubeconfigFile
    }

    /// kubectl flags that reach this same cluster. kubectl runs with the same environment, so it merges
    /// `$KUBECONFIG` as `so` did; in a pod with no kubeconfig it finds the service account itself (none).
    public var kubectlFlags: [String] {
        if connection.inCluster && kubeconfigFile == nil { return [] }
        return (kubeconfigFile.map { ["--kubeconfig", $0] } ?? []) + ["--context", connection.contextName]
    }
}
