import Foundation

/// Where each kind of object goes, defined once: rendering files every object under its stage, the
/// manifest lists the stages in this order, and `start` applies the manifest in this order.
public enum Stage: Int, CaseIterable, Comparable, Sendable {
    case namespace, policies, secrets, configMaps, volumes, claims, services, workloads, jobs, ingresses, others

    /// The kinds of the stage (`others` also takes any kind not named here).
    public var kinds: [String] {
        switch self {
        case .namespace: return ["Namespace"]
        case .policies: return ["ResourceQuota", "LimitRange", "NetworkPolicy"]
        case .secrets: return ["Secret"]
        case .configMaps: return ["ConfigMap"]
        case .volumes: return ["PersistentVolume"]
        case .claims: return ["PersistentVolumeClaim"]
        case .services: return ["Service"]
        case .workloads: return ["Deployment"]
        case .jobs: return ["Job"]
        case .ingresses: return ["Ingress"]
        case .others: return ["EndpointSlice"]
        }
    }

    public static func of(kind: String) -> Stage { allCases.first { $0.kinds.contains(kind) } ?? .others }

    /// Stages whose objects may go to the API server together (one batch, requests in parallel); the
    /// phases go one after another. Policies are in place before anything they limit (a quota counts
    /// claims and pods); what pods use exists before the pods. A PersistentVolume exists before the claim
    /// bound to it by name (a spec volume's path): a claim the controller reads first stays Pending until its
    /// next resync, 15 s later, and the two went in parallel.
    public enum Phase: Int, CaseIterable, Comparable, Sendable {
        case policies, podInputs, workloads
        public static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }
    }

    /// The Namespace exists before anything is applied (start creates it before it locks the deployment):
    /// its own apply, which sets the labels pods are admitted by, may go with the first batch.
    public var phase: Phase {
        switch self {
        case .namespace, .policies, .volumes: return .policies
        case .secrets, .configMaps, .claims, .services: return .podInputs
        case .workloads, .jobs, .ingresses, .others: return .workloads
        }
    }

    public static func < (a: Stage, b: Stage) -> Bool { a.rawValue < b.rawValue }
}
