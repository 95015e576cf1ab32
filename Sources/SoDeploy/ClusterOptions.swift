import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// How a command reaches the cluster: `--kubeconfig`/`--context`, the deployment's own kubeconfig
/// (deploy-to k8s), or the host's shared kind cluster (deploy-to k8s-kind).
public struct ClusterOptions: Sendable {
    public var kubeconfig: String?
    public var context: String?
    /// kind only: create the cluster when none exists, load local images into it.
    public var performClusterManagement: Bool

    public init(kubeconfig: String? = nil, context: String? = nil, performClusterManagement: Bool = true) {
        self.kubeconfig = kubeconfig
        self.context = context
        self.performClusterManagement = performClusterManagement
    }
}
