import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender

/// What else a namespace holds besides one deployment's objects, looked at before `so` deletes the namespace.
/// A namespace `so` made (its create marks it: `DeploymentNames.Annotation.madeBy`) holds only what `so` put
/// there. One it did not make — a spec `namespace:` or a workspace name that named a namespace that already
/// existed, or a namespace made before the mark — may hold other people's objects, which deleting it would
/// take along: such a namespace is kept when it does.
struct NamespaceContents {
    let client: ClusterClient

    /// The kinds looked at: what people put in a namespace (pods stand for StatefulSets, DaemonSets and
    /// CronJobs), each one `so`'s ClusterRole may list.
    static let kinds: [ResourceType] = [
        .pod, .deployment, .job, .service, .configMap, .secret, .persistentVolumeClaim, .ingress,
    ]

    /// Whether `so` made the namespace (as read).
    static func madeBySo(_ namespace: JSON) -> Bool {
        namespace.annotations[DeploymentNames.Annotation.madeBy] == DeploymentNames.Annotation.madeBySo
    }

    /// The objects in namespace `name` that are not deployment `id`'s, as "Kind name", sorted; empty without a
    /// request when `so` made it.
    func others(in name: String, madeBySo: Bool, deployment id: String) async throws -> [String] {
        if madeBySo { return [] }
        return try await withThrowingTaskGroup(of: [String].self) { group in
            for type in Self.kinds {
                group.addTask {
                    try await client.list(type, namespace: name, labelSelector: nil)
                        .filter { !Self.isOurs($0, type, id) }.map { "\(type.kind) \($0.name)" }
                }
            }
            var out: [String] = []
            for try await found in group { out += found }
            return out.sorted()
        }
    }

    /// Deployment `id`'s (its Jobs' pods carry `app=<id>-job`), or what Kubernetes puts in every namespace.
    static func isOurs(_ o: JSON, _ type: ResourceType, _ id: String) -> Bool {
        let app = o.labels["app"]
        if app == id || app == "\(id)-job" { return true }
        if type == .configMap && o.name == "kube-root-ca.crt" { return true }
        if type == .secret && o.labels[RecordStore.Key.of] == id { return true }
        return type == .secret && o["type"]?.string == "kubernetes.io/service-account-token"
    }

    /// The warning for namespace `name`, kept because it holds `others`.
    static func keptWarning(_ name: String, others: [String]) -> (message: String, hint: String) {
        let named = others.prefix(3).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
        return (
            "namespace \(name) was kept: so did not make it and it holds \(others.count) "
                + "\(English.plural("object", others.count)) of others (\(named)); only this deployment's were deleted",
            "delete it yourself ('kubectl delete namespace \(name)') if nothing in it is needed"
        )
    }
}
