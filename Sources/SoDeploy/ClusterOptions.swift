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
    /// false: the cluster every deployment shares (`--kubeconfig`, `SO_KUBECONFIG`, the pod's account …), never the
    /// deployment's own kubeconfig.yml or kind cluster. The page acts on the cluster it reads, where the record came
    /// from (a directory made from a record holds no kubeconfig).
    public var deploymentsOwn = true

    public init(kubeconfig: String? = nil, context: String? = nil, performClusterManagement: Bool = true) {
        self.kubeconfig = kubeconfig
        self.context = context
        self.performClusterManagement = performClusterManagement
    }
}
