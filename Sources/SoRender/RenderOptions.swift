import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

public struct RenderOptions: Sendable {
    /// Also render the generated-secrets Secret, with placeholder values (never real ones).
    public var placeholderSecrets = false
    /// Addresses of the host names in the spec's `egress:` (resolved by the caller; rendering does no I/O).
    public var egressAddresses: [String: [String]] = [:]
    /// The address compose's `host-gateway` stands for, found by the caller (on kind, the gateway of kind's
    /// docker network); the spec's `host-gateway:` wins over it. Nil: such extra_hosts are left out.
    public var hostGateway: String?
    /// Where the cluster's DNS answers, as the cluster reports it (start reads it for a spec with `egress:`);
    /// nil: the DNS policy allows port 53 to kube-system's pods, which is all a render without a cluster knows.
    public var clusterDNS: ClusterDNS?
    /// The class an Ingress names when the spec names none: the cluster's default IngressClass, as start reads it;
    /// nil: `caddy`, laconic-so's, which is all a render without a cluster knows.
    public var ingressClass: String?
    /// The service account of a team's `so dashboard` in the cluster (`SO_DASHBOARD_ACCOUNT`, read by the caller):
    /// the namespace gets a RoleBinding of `DashboardReader.clusterRole` to it (its Secrets' values to redact with,
    /// `pods/exec` for task reports, the objects a deployment's page shows); nil: none.
    public var dashboardAccount: DashboardReader?
    /// The node that holds the path volumes, as start found it (the kind cluster's node with the mounts, or the
    /// cluster's only node); the spec's `volume-node:` wins. Nil: on kind, the deployment's own cluster's node.
    public var volumeNode: VolumeNode?
    public init(
        placeholderSecrets: Bool = false, egressAddresses: [String: [String]] = [:], hostGateway: String? = nil,
        clusterDNS: ClusterDNS? = nil, ingressClass: String? = nil
    ) {
        self.ingressClass = ingressClass
        self.clusterDNS = clusterDNS
        self.placeholderSecrets = placeholderSecrets
        self.egressAddresses = egressAddresses
        self.hostGateway = hostGateway
    }
}
