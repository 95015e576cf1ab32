import Foundation
import SoBasics

/// Where a kind of object lives in the API.
public struct ResourceType: Sendable, Equatable, Hashable {
    public var apiVersion: String
    public var kind: String
    public var plural: String
    public var namespaced: Bool

    public init(apiVersion: String, kind: String, plural: String, namespaced: Bool) {
        self.apiVersion = apiVersion
        self.kind = kind
        self.plural = plural
        self.namespaced = namespaced
    }

    /// `/api/v1` or `/apis/group/version`.
    public var basePath: String { apiVersion.contains("/") ? "/apis/\(apiVersion)" : "/api/\(apiVersion)" }

    public func collectionPath(namespace: String?) -> String {
        if namespaced, let namespace { return "\(basePath)/namespaces/\(namespace)/\(plural)" }
        return "\(basePath)/\(plural)"
    }

    public func path(name: String, namespace: String?) -> String { "\(collectionPath(namespace: namespace))/\(name)" }

    // The kinds so reads, writes or deletes: one static per kind (`ResourceType.secret`), and all of them in `known`.
    public static let namespace = ResourceType(
        apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false)
    public static let secret = ResourceType(apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true)
    public static let configMap = ResourceType(
        apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true)
    public static let persistentVolume = ResourceType(
        apiVersion: "v1", kind: "PersistentVolume", plural: "persistentvolumes", namespaced: false)
    public static let persistentVolumeClaim = ResourceType(
        apiVersion: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true)
    public static let service = ResourceType(apiVersion: "v1", kind: "Service", plural: "services", namespaced: true)
    public static let pod = ResourceType(apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true)
    public static let event = ResourceType(apiVersion: "v1", kind: "Event", plural: "events", namespaced: true)
    public static let node = ResourceType(apiVersion: "v1", kind: "Node", plural: "nodes", namespaced: false)
    public static let serviceAccount = ResourceType(
        apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true)
    public static let resourceQuota = ResourceType(
        apiVersion: "v1", kind: "ResourceQuota", plural: "resourcequotas", namespaced: true)
    public static let limitRange = ResourceType(
        apiVersion: "v1", kind: "LimitRange", plural: "limitranges", namespaced: true)
    public static let deployment = ResourceType(
        apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true)
    public static let replicaSet = ResourceType(
        apiVersion: "apps/v1", kind: "ReplicaSet", plural: "replicasets", namespaced: true)
    public static let daemonSet = ResourceType(
        apiVersion: "apps/v1", kind: "DaemonSet", plural: "daemonsets", namespaced: true)
    public static let job = ResourceType(apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true)
    public static let ingress = ResourceType(
        apiVersion: "networking.k8s.io/v1", kind: "Ingress", plural: "ingresses", namespaced: true)
    public static let networkPolicy = ResourceType(
        apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", plural: "networkpolicies", namespaced: true)
    public static let ingressClass = ResourceType(
        apiVersion: "networking.k8s.io/v1", kind: "IngressClass", plural: "ingressclasses", namespaced: false)
    public static let endpointSlice = ResourceType(
        apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", plural: "endpointslices", namespaced: true)
    public static let customResourceDefinition = ResourceType(
        apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions",
        namespaced: false)
    /// cert-manager's issuers (where cert-manager is installed).
    public static let clusterIssuer = ResourceType(
        apiVersion: "cert-manager.io/v1", kind: "ClusterIssuer", plural: "clusterissuers", namespaced: false)
    public static let issuer = ResourceType(
        apiVersion: "cert-manager.io/v1", kind: "Issuer", plural: "issuers", namespaced: true)
    public static let runtimeClass = ResourceType(
        apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false)
    /// Who the API server takes the caller for (`kubectl auth whoami`): created, never stored.
    public static let selfSubjectReview = ResourceType(
        apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", plural: "selfsubjectreviews",
        namespaced: false)
    public static let lease = ResourceType(
        apiVersion: "coordination.k8s.io/v1", kind: "Lease", plural: "leases", namespaced: true)
    public static let clusterRole = ResourceType(
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", plural: "clusterroles", namespaced: false)
    public static let roleBinding = ResourceType(
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", plural: "rolebindings", namespaced: true)
    public static let clusterRoleBinding = ResourceType(
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding",
        plural: "clusterrolebindings", namespaced: false)

    public static let known: [ResourceType] = [
        .namespace, .secret, .configMap, .persistentVolume, .persistentVolumeClaim, .service, .pod, .event, .node,
        .serviceAccount, .resourceQuota, .limitRange, .deployment, .replicaSet, .daemonSet, .job, .ingress,
        .networkPolicy, .ingressClass, .endpointSlice, .runtimeClass, .lease, .clusterRole, .roleBinding,
        .clusterRoleBinding,
        .customResourceDefinition, .clusterIssuer, .issuer, .selfSubjectReview,
    ]

    public static func of(apiVersion: String, kind: String) throws -> ResourceType {
        guard let t = known.first(where: { $0.apiVersion == apiVersion && $0.kind == kind }) else {
            throw SoError(
                "so does not know the resource \(apiVersion) \(kind)", hint: "this is a bug in so's resource table")
        }
        return t
    }

    public static func of(_ object: KubeObject) throws -> ResourceType {
        try of(apiVersion: object.apiVersion, kind: object.kind)
    }
}
