import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

public struct DeploymentStatus: Sendable, Encodable {
    public struct Workload: Sendable, Encodable {
        public var kind: String
        public var name: String
        public var state: String
        public var ready: Bool
    }
    public var deployment: String
    public var namespace: String
    public var cluster: String
    public var workloads: [Workload]
    public var ingressHosts: [String]
    /// Per host with a `tls` entry: the certificate's Secret and whether it exists yet (an issuer's Secret comes
    /// once cert-manager has made it; a missing one means the controller serves its default certificate).
    public struct Certificate: Sendable, Encodable {
        public var host: String
        public var secret: String
        public var present: Bool
        /// The cert-manager issuer asked for it (`ClusterIssuer NAME`, `Issuer NAME`), when one is.
        public var issuer: String?
    }
    public var certificates: [Certificate] = []
    public var pods: [PodInfo]
    /// Pods that cannot run for now and why, one line each ("pod P cannot run: its volume V is on N, which is
    /// unschedulable (cordoned or drained)").
    public var problems: [String] = []
    /// Recent warning events in the namespace, newest first: "Kind/name reason: message".
    public var warnings: [String]
    public var ready: Bool
}
