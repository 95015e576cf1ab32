import Foundation
import SoBasics

/// A JSON value read back from the API server.
public indirect enum JSON: Sendable, Equatable {
    case object([String: JSON])
    case array([JSON])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public static func parse(_ data: Data) throws -> JSON { try JSONReader.parse(data) }

    public subscript(_ key: String) -> JSON? { if case .object(let o) = self { return o[key] }; return nil }
    /// Follows a dotted path: `json["status.readyReplicas"]`-style via `at("status", "readyReplicas")`.
    public func at(_ keys: String...) -> JSON? {
        var cur: JSON? = self
        for k in keys { cur = cur?[k] }
        return cur
    }
    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var int: Int? { if case .number(let n) = self { return Int(n) }; return nil }
    public var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var array: [JSON] { if case .array(let a) = self { return a }; return [] }
    public var object: [String: JSON] { if case .object(let o) = self { return o }; return [:] }
    public var name: String { at("metadata", "name")?.string ?? "" }
    public var namespace: String? { at("metadata", "namespace")?.string }
    public var labels: [String: String] { (at("metadata", "labels")?.object ?? [:]).compactMapValues(\.string) }
    public var annotations: [String: String] { (at("metadata", "annotations")?.object ?? [:]).compactMapValues(\.string) }
}

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
    public static let namespace = ResourceType(apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false)
    public static let secret = ResourceType(apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true)
    public static let configMap = ResourceType(apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true)
    public static let persistentVolume = ResourceType(apiVersion: "v1", kind: "PersistentVolume", plural: "persistentvolumes", namespaced: false)
    public static let persistentVolumeClaim = ResourceType(apiVersion: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true)
    public static let service = ResourceType(apiVersion: "v1", kind: "Service", plural: "services", namespaced: true)
    public static let pod = ResourceType(apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true)
    public static let event = ResourceType(apiVersion: "v1", kind: "Event", plural: "events", namespaced: true)
    public static let node = ResourceType(apiVersion: "v1", kind: "Node", plural: "nodes", namespaced: false)
    public static let serviceAccount = ResourceType(apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true)
    public static let resourceQuota = ResourceType(apiVersion: "v1", kind: "ResourceQuota", plural: "resourcequotas", namespaced: true)
    public static let limitRange = ResourceType(apiVersion: "v1", kind: "LimitRange", plural: "limitranges", namespaced: true)
    public static let deployment = ResourceType(apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true)
    public static let replicaSet = ResourceType(apiVersion: "apps/v1", kind: "ReplicaSet", plural: "replicasets", namespaced: true)
    public static let daemonSet = ResourceType(apiVersion: "apps/v1", kind: "DaemonSet", plural: "daemonsets", namespaced: true)
    public static let job = ResourceType(apiVersion: "batch/v1", kind: "Job", plural: "jobs", namespaced: true)
    public static let ingress = ResourceType(apiVersion: "networking.k8s.io/v1", kind: "Ingress", plural: "ingresses", namespaced: true)
    public static let networkPolicy = ResourceType(apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", plural: "networkpolicies", namespaced: true)
    public static let ingressClass = ResourceType(apiVersion: "networking.k8s.io/v1", kind: "IngressClass", plural: "ingressclasses", namespaced: false)
    public static let endpointSlice = ResourceType(apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", plural: "endpointslices", namespaced: true)
    public static let runtimeClass = ResourceType(apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false)
    public static let lease = ResourceType(apiVersion: "coordination.k8s.io/v1", kind: "Lease", plural: "leases", namespaced: true)
    public static let clusterRole = ResourceType(apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", plural: "clusterroles", namespaced: false)
    public static let clusterRoleBinding = ResourceType(apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding",
                                                        plural: "clusterrolebindings", namespaced: false)

    public static let known: [ResourceType] = [
        .namespace, .secret, .configMap, .persistentVolume, .persistentVolumeClaim, .service, .pod, .event, .node,
        .serviceAccount, .resourceQuota, .limitRange, .deployment, .replicaSet, .daemonSet, .job, .ingress,
        .networkPolicy, .ingressClass, .endpointSlice, .runtimeClass, .lease, .clusterRole, .clusterRoleBinding
    ]

    public static func of(apiVersion: String, kind: String) throws -> ResourceType {
        guard let t = known.first(where: { $0.apiVersion == apiVersion && $0.kind == kind }) else {
            throw SoError("so does not know the resource \(apiVersion) \(kind)", hint: "this is a bug in so's resource table")
        }
        return t
    }

    public static func of(_ object: KubeObject) throws -> ResourceType { try of(apiVersion: object.apiVersion, kind: object.kind) }
}

extension KubeObject {
    /// An object of one of the kinds `so` renders: `KubeObject(.secret, name: …)`.
    public init(_ type: ResourceType, name: String, namespace: String? = nil, labels: [(String, String)] = [],
                annotations: [(String, String)] = [], body: [(String, YValue)] = []) {
        self.init(apiVersion: type.apiVersion, kind: type.kind, name: name, namespace: namespace, labels: labels,
                  annotations: annotations, body: body)
    }

    /// Whether the object is of `type`'s kind (`o.isKind(.job)`): the kind alone, not the apiVersion.
    public func isKind(_ type: ResourceType) -> Bool { kind == type.kind }
}

public enum DeletePropagation: String, Sendable { case foreground = "Foreground", background = "Background", orphan = "Orphan" }

public struct LogOptions: Sendable {
    public var container: String?
    public var follow = false
    public var tailLines: Int?
    public var sinceSeconds: Int?
    public var timestamps = false
    public init(container: String? = nil, follow: Bool = false, tailLines: Int? = nil, sinceSeconds: Int? = nil, timestamps: Bool = false) {
        self.timestamps = timestamps
        self.container = container
        self.follow = follow
        self.tailLines = tailLines
        self.sinceSeconds = sinceSeconds
    }
}

/// The cluster seam: the live client speaks HTTPS to an API server; tests use a stateful fake.
public protocol ClusterClient: Sendable {
    /// Server-side apply (field manager, force); returns the object as stored.
    func apply(_ object: KubeObject, fieldManager: String, force: Bool) async throws -> JSON
    /// Server-side apply with `dryRun=All`: the API server validates and admits the object and returns it
    /// as it would be stored, and stores nothing.
    func dryRunApply(_ object: KubeObject, fieldManager: String) async throws -> JSON
    /// Creates the object (POST); nil when one of that name already exists (AlreadyExists).
    func create(_ object: KubeObject, fieldManager: String) async throws -> JSON?
    /// Replaces the object (PUT) only if it is still at `resourceVersion`: a compare-and-swap. Returns the
    /// object as stored, or nil when someone changed it in between (Conflict).
    func update(_ object: KubeObject, resourceVersion: String, fieldManager: String) async throws -> JSON?
    /// nil when the object does not exist.
    func get(_ type: ResourceType, name: String, namespace: String?) async throws -> JSON?
    /// Every object matching `labelSelector` (all pages).
    func list(_ type: ResourceType, namespace: String?, labelSelector: String?) async throws -> [JSON]
    /// JSON merge patch (RFC 7386); returns the object as stored.
    func patch(_ type: ResourceType, name: String, namespace: String?, mergePatch: Data) async throws -> JSON
    /// false when the object was already gone.
    func delete(_ type: ResourceType, name: String, namespace: String?, propagation: DeletePropagation) async throws -> Bool
    /// Deletes the object only if it is still at `resourceVersion` (a precondition the API server checks);
    /// false when it is gone or someone changed it since (Conflict).
    func delete(_ type: ResourceType, name: String, namespace: String?, resourceVersion: String) async throws -> Bool
    /// Log text of one container; with `follow`, chunks arrive as the container writes them.
    func logs(namespace: String, pod: String, options: LogOptions) -> AsyncThrowingStream<String, Error>
}

extension ClusterClient {
    /// Sets `annotations` on the object with one merge patch (nothing else of it is sent or changed).
    @discardableResult
    public func annotate(_ type: ResourceType, name: String, namespace: String?, _ annotations: [(String, String)]) async throws -> JSON {
        let patch = YValue.map([("metadata", .map([("annotations", .map(annotations.map { ($0.0, .string($0.1)) }))]))])
        return try await self.patch(type, name: name, namespace: namespace, mergePatch: Data(JSONWriter.bytes(patch, .compact)))
    }
}

extension JSON {
    /// The same value as a `YValue` (object keys sorted), to send back, e.g. in a merge patch. Numbers
    /// without a fraction become integers; others keep their shortest text.
    public var yValue: YValue {
        switch self {
        case .object(let o): return .map(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.yValue) })
        case .array(let a): return .list(a.map(\.yValue))
        case .string(let s): return .string(s)
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? .int(Int(n)) : .string(String(n))
        case .bool(let b): return .bool(b)
        case .null: return .null
        }
    }
}
