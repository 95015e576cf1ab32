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
    public var pods: [PodInfo]
    /// Recent warning events in the namespace, newest first: "Kind/name reason: message".
    public var warnings: [String]
    public var ready: Bool
}
