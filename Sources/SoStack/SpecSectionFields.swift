import Foundation
import SoBasics

/// The keys of `SpecSections`, as its box holds them.
public struct SpecSectionFields: Sendable {
    public var resources = SpecResources()
    public var security = SpecSecurity()
    public var imagePullSecret: ImagePullSecret?
    public var imagePullPolicy: String?
    public var imageOverrides: [(container: String, image: String)] = []
    public var annotations: [(String, String)] = []
    public var labels: [(String, String)] = []
    public var nodeAffinities: [NodeAffinity] = []
    public var nodeTolerations: [NodeToleration] = []
    public var externalServices: [ExternalService] = []
    public var caCertificates: [String] = []
    public var ingressClass: String?
    public var maintenanceService: String?
    public var caddyIngressImage: String?
    /// The image of the init containers that make a plain compose service wait for its `depends_on` (it
    /// needs `sh` and `nc`); nil: `busybox:1.36`.
    public var waitImage: String?
    public var acmeEmail: String?
    public var egress: EgressPolicy?
    public var quota: NamespaceQuota?
}
