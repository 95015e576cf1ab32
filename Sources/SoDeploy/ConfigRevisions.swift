import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender

/// Pods roll when what they read changes. A Secret or ConfigMap the deployment applies carries a revision
/// (`so.dev/revision`) that goes up by one each time its content changes (start's own unchanged-test, which
/// compares a Secret's values without writing any function of them anywhere); the pod template of each
/// Deployment that reads it (env, envFrom, volumes) carries the revisions it reads (`so.dev/config-revisions`,
/// e.g. `configmap/app-config=2,secret/app-generated-secrets=3`). A changed value is a changed pod template:
/// the Deployment rolls, as with helm's checksum annotations or Reloader, and an unchanged one stays put.
enum ConfigRevisions {
    /// On Secrets and ConfigMaps: how many times their content changed.
    static let revision = "so.dev/revision"
    /// On pod templates: the revisions of the Secrets and ConfigMaps the pods read.
    static let podAnnotation = "so.dev/config-revisions"

    /// `objects` with revisions: each Secret and ConfigMap compared with `live` (by "Kind/name": what the
    /// deployment owns as listed), each Deployment stamped with the revisions it reads (a Secret or ConfigMap
    /// not among `objects`, as with `--only`, counts at its live revision).
    static func stamp(_ objects: [KubeObject], live: [String: JSON]) -> [KubeObject] {
        var revisions: [String: Int] = [:]
        var out = objects.map { o -> KubeObject in
            guard o.isKind(.secret) || o.isKind(.configMap) else { return o }
            let current = live[o.kind + "/" + o.name]
            let was = current.flatMap { Int($0.annotations[revision] ?? "") } ?? 0
            var same = o
            same.annotations.append((revision, String(was)))
            let now = current.map { was > 0 && same.isUnchanged(in: $0) } == true ? was : was + 1
            var stamped = o
            stamped.annotations.append((revision, String(now)))
            revisions[reference(o.kind, o.name)] = now
            return stamped
        }
        for (key, json) in live {
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == "Secret" || parts[0] == "ConfigMap",
                revisions[reference(parts[0], parts[1])] == nil,
                let r = Int(json.annotations[revision] ?? "")
            else { continue }
            revisions[reference(parts[0], parts[1])] = r
        }
        out = out.map { o in
            guard o.isKind(.deployment) else { return o }
            let read = Self.reads(o.value).compactMap { ref in revisions[ref].map { "\(ref)=\($0)" } }
            guard !read.isEmpty else { return o }
            var stamped = o
            let path: ArraySlice<String> = ["template", "metadata", "annotations", podAnnotation]
            stamped.body = o.body.map { k, v in
                k == "spec" ? (k, ImageLoader.setting(v, path, .string(read.joined(separator: ",")))) : (k, v)
            }
            return stamped
        }
        return out
    }

    /// The deployment's Secrets and ConfigMaps as they run, by "Kind/name" (what `stamp` compares with), for
    /// the verbs that apply some objects without listing all the deployment owns (`--only`, rotate-secrets).
    static func live(_ client: ClusterClient, namespace: String, deployment id: String) async throws -> [String: JSON] {
        let selector = DeploymentNames.ownedSelector(id)
        async let secrets = client.list(.secret, namespace: namespace, labelSelector: selector)
        async let configMaps = client.list(.configMap, namespace: namespace, labelSelector: selector)
        var out: [String: JSON] = [:]
        for s in try await secrets { out["Secret/" + s.name] = s }
        for m in try await configMaps { out["ConfigMap/" + m.name] = m }
        return out
    }

    static func reference(_ kind: String, _ name: String) -> String { kind.lowercased() + "/" + name }

    /// The revisions a stamped Deployment's pod template carries, or nil.
    static func read(_ deployment: KubeObject) -> String? {
        var v = deployment.value
        for key in ["spec", "template", "metadata", "annotations"] {
            guard let next = v.field(key) else { return nil }
            v = next
        }
        guard case .string(let s)? = v.field(podAnnotation) else { return nil }
        return s
    }

    /// The Secrets and ConfigMaps a workload's pods read ("secret/NAME", "configmap/NAME"), sorted, once each:
    /// `envFrom` refs, `valueFrom` key refs, `secret`/`configMap` volumes and projected sources.
    static func reads(_ value: YValue) -> [String] {
        var out = Set<String>()
        func walk(_ v: YValue) {
            switch v {
            case .map(let pairs):
                for (k, x) in pairs {
                    switch k {
                    case "secretRef", "secretKeyRef":
                        if let n = name(x, "name") { out.insert(reference("Secret", n)) }
                    case "configMapRef", "configMapKeyRef":
                        if let n = name(x, "name") { out.insert(reference("ConfigMap", n)) }
                    case "secret":
                        if let n = name(x, "secretName") ?? name(x, "name") { out.insert(reference("Secret", n)) }
                    case "configMap":
                        if let n = name(x, "name") { out.insert(reference("ConfigMap", n)) }
                    default: break
                    }
                    walk(x)
                }
            case .list(let items): items.forEach(walk)
            default: break
            }
        }
        walk(value)
        return out.sorted()
    }

    static func name(_ v: YValue, _ key: String) -> String? {
        guard case .string(let s)? = v.field(key) else { return nil }
        return s
    }
}
