import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// What `start --dry-run` would do to one object.
public struct PlannedChange: Sendable, Equatable, Encodable {
    public enum Action: String, Sendable, Encodable { case create, configure, unchanged, delete, keep }
    public var action: Action
    public var kind: String
    public var name: String
    public var namespace: String?
    /// Why, when the object was not checked by the API server (its namespace does not exist yet) or is kept.
    public var note: String?

    public var line: String {
        let verb: String
        switch action {
        case .create: verb = "would create"
        case .configure: verb = "would configure"
        case .unchanged: verb = "unchanged"
        case .delete: verb = "would delete"
        case .keep: verb = "would keep"
        }
        return "\(verb) \(kind) \(namespace.map { "\($0)/" } ?? "")\(name)" + (note.map { " (\($0))" } ?? "")
    }
}

/// `start --dry-run` / `up --dry-run`: render, find the cluster, and let the API server judge every object
/// with a server-side dry run (`dryRun=All`). Nothing is created, locked, loaded, generated or waited for.
public struct PlanAction: Sendable {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(directory: String, cluster: ClusterOptions) async throws -> [PlannedChange] {
        let model = try RenderAction(ctx).model(directory)
        let needsGateway = HostGatewayFinder.needed(model)
        var manifest = try RenderAction(ctx).render(model, warn: !needsGateway)
        let namespace = Renderer.namespace(of: model)
        let found = try await ClusterTargets(ctx: ctx).find(model, cluster, allowCreate: true)
        var gateway: String?
        if needsGateway {
            // As start does: on kind, compose's host-gateway is the gateway of kind's docker network.
            gateway = found?.kindCluster == nil ? nil : await HostGatewayFinder(ctx: ctx).kindGateway()
            manifest = try RenderAction(ctx).render(model, hostGateway: gateway)
        }
        guard let target = found else {
            let wanted = model.spec.kindClusterName ?? model.identity.clusterID
            ctx.say("would create kind cluster '\(wanted)' from \(Path.join(model.directory, "kind-config.yml"))")
            return manifest.objects.map { PlannedChange(action: .create, kind: $0.kind, name: $0.name, namespace: $0.namespace, note: "not checked: the cluster does not exist yet") }
        }
        let client = try ctx.connect(target.connection)
        if model.spec.sections.egress != nil, let dns = await ClusterDNSReader(client: client).read() {
            manifest = try RenderAction(ctx).render(model, hostGateway: gateway, clusterDNS: dns, warn: false)
        }
        let existing = try await client.get(.namespace, name: namespace, namespace: nil)
        var plan: [PlannedChange] = []
        let secretName = DeploymentNames.generatedSecrets(model.id)
        if !model.secretKeys.isEmpty {
            let secretType = try ResourceType.of(apiVersion: "v1", kind: "Secret")
            let stored = existing == nil ? nil : try await client.get(secretType, name: secretName, namespace: namespace)
            let keys = model.secretKeys.sorted().joined(separator: ", ")
            plan.append(PlannedChange(action: stored == nil ? .create : .keep, kind: "Secret", name: secretName, namespace: namespace,
                                      note: stored == nil ? "values generated at start: \(keys)" : "its values are kept"))
        }
        for object in manifest.objects {
            let namespaced = object.namespace != nil && object.kind != "Namespace"
            if namespaced && existing == nil {
                // The API server refuses even a dry run in a namespace that does not exist yet.
                plan.append(PlannedChange(action: .create, kind: object.kind, name: object.name, namespace: object.namespace, note: "not checked: its namespace is new"))
                continue
            }
            let type = try ResourceType.of(object)
            let current = try await client.get(type, name: object.name, namespace: namespaced ? object.namespace : nil)
            let admitted = try await client.dryRunApply(object, fieldManager: "so")
            let action: PlannedChange.Action
            if let current {
                // A Namespace carries run-time annotations (lock, kinds, expiry) start adds: its labels decide.
                action = (object.kind == "Namespace" ? current.labels == admitted.labels : Self.same(current, admitted)) ? .unchanged : .configure
            } else {
                action = .create
            }
            plan.append(PlannedChange(action: action, kind: object.kind, name: object.name, namespace: namespaced ? object.namespace : nil))
        }
        if existing != nil {
            let owned = try await StartAction(ctx).listOwned(client, namespace: namespace, model: model, keep: manifest.objects)
            for (type, name) in owned.pruneCandidates where !(type.kind == "Secret" && name == secretName) {
                plan.append(PlannedChange(action: .delete, kind: type.kind, name: name, namespace: type.namespaced ? namespace : nil, note: "no longer in the deployment"))
            }
        }
        return plan
    }

    /// Whether the object the server would store equals the one it holds (bookkeeping fields aside).
    static func same(_ a: JSON, _ b: JSON) -> Bool { comparable(a) == comparable(b) }

    static func comparable(_ json: JSON) -> JSON {
        guard case .object(var o) = json else { return json }
        o["status"] = nil
        if case .object(var meta)? = o["metadata"] {
            for k in ["resourceVersion", "generation", "managedFields", "creationTimestamp", "uid"] { meta[k] = nil }
            o["metadata"] = .object(meta)
        }
        return .object(o)
    }
}
