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
    /// With `--diff`, for an object that would be configured: each field that would change, as
    /// `kubectl diff` shows it (`- path: old`, `+ path: new`); a Secret's values never appear.
    public var diff: [String]?

    /// `--detailed-exitcode`'s code for a plan that changes something (0: nothing; 1 stays an error).
    public static let exitChanges: Int32 = 2

    /// Whether a plan would change the cluster: something to create, configure or delete (kept and unchanged
    /// objects are not changes).
    public static func changes(_ plan: [PlannedChange]) -> Bool {
        plan.contains { [.create, .configure, .delete].contains($0.action) }
    }

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

    public func run(directory: String, cluster: ClusterOptions, diff: Bool = false) async throws -> [PlannedChange] {
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
            return manifest.objects.map { PlannedChange(action: .create, kind: $0.kind, name: $0.name, namespace: $0.namespace,
                    note: "not checked: the cluster does not exist yet") }
        }
        let client = try ctx.connect(target.connection)
        if model.spec.sections.egress != nil, let dns = await ClusterDNSReader(client: client).read() {
            manifest = try RenderAction(ctx).render(model, hostGateway: gateway, clusterDNS: dns, warn: false)
        }
        let existing = try await client.get(.namespace, name: namespace, namespace: nil)
        var plan: [PlannedChange] = []
        let secretName = DeploymentNames.generatedSecrets(model.id)
        let secretType = try ResourceType.of(apiVersion: "v1", kind: "Secret")
        let stored = existing == nil || model.secretKeys.isEmpty ? nil : try await client.get(secretType, name: secretName, namespace: namespace)
        // What start would apply, built as start builds it (values made for keys not stored yet are never shown).
        let built = try StartManifest(ctx: ctx, model: model).objects(manifest, stored: stored, ttl: nil)
        var owned: OwnedObjects?
        if let existing {
            owned = try await StartAction(ctx).listOwned(client, namespace: namespace, model: model, keep: built.objects,
                                                         kinds: StartAction.pruneKinds(existing))
        }
        // As start stamps them: the local images' IDs (start's own choice of images and when; read, never
        // loaded), the config revisions.
        let rendered = StartAction.Rendered(model: model, manifest: manifest, hostGateway: gateway)
        let ids = await StartAction(ctx).localImageIDs(rendered, target, StartRequest(directory: directory, cluster: cluster)).value
        let objects = ConfigRevisions.stamp(ImageLoader.stamp(built.objects, ids: ids), live: owned?.live ?? [:])
        for object in objects {
            let namespaced = object.namespace != nil && object.kind != "Namespace"
            var note: String?
            if object.kind == "Secret" && object.name == secretName && !built.madeNow.isEmpty {
                note = "values generated at start: " + built.madeNow.joined(separator: ", ")
            }
            if namespaced && existing == nil {
                // The API server refuses even a dry run in a namespace that does not exist yet.
                plan.append(PlannedChange(action: .create, kind: object.kind, name: object.name, namespace: object.namespace,
                                          note: note.map { "not checked: its namespace is new; \($0)" } ?? "not checked: its namespace is new"))
                continue
            }
            let type = try ResourceType.of(object)
            let live: JSON?
            if object.kind == "Namespace" {
                live = existing
            } else if let owned, StartAction.prunable.contains(object.kind) {
                live = owned.live[object.kind + "/" + object.name]
            } else {
                live = try await client.get(type, name: object.name, namespace: namespaced ? object.namespace : nil)
            }
            // start's own test: an object as rendered is not sent again (a Namespace whose lifecycle annotations
            // alone differ only has them renewed; a Job that exists is never run again).
            if let live, object.kind == "Namespace" ? StartAction.lifecycleRenewal(object, live: live) != nil
                : object.kind == "Job" || object.isUnchanged(in: live) {
                plan.append(PlannedChange(action: .unchanged, kind: object.kind, name: object.name, namespace: namespaced ? object.namespace : nil))
                continue
            }
            let admitted = try await client.dryRunApply(object.stamped, fieldManager: "so")
            var change = PlannedChange(action: live == nil ? .create : .configure, kind: object.kind, name: object.name,
                                       namespace: namespaced ? object.namespace : nil, note: note)
            if diff, let live {
                // The applied hash changes with anything else: the fields say what.
                change.diff = ObjectDiff.lines(from: Self.comparable(live), to: Self.comparable(admitted), secret: object.kind == "Secret")
                    .filter { !$0.dropFirst(2).hasPrefix("metadata.annotations.\(KubeObject.appliedHashAnnotation):") }
            }
            plan.append(change)
        }
        if let owned {
            for (type, name) in owned.pruneCandidates {
                plan.append(PlannedChange(action: .delete, kind: type.kind, name: name, namespace: type.namespaced ? namespace : nil,
                        note: "no longer in the deployment"))
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

/// The fields two versions of an object differ in, one line each, as `kubectl diff` shows them: `- path: old`
/// then `+ path: new` (a field only one side has shows only that side). Paths are dotted, list items
/// `[i]`. A Secret's `data`/`stringData` values are never shown: `~ data.KEY: (secret value changed)`.
enum ObjectDiff {
    static func lines(from old: JSON, to new: JSON, secret: Bool) -> [String] {
        var out: [String] = []
        func text(_ v: JSON) -> String { String(decoding: JSONWriter.bytes(v.yValue, .compact), as: UTF8.self) }
        func walk(_ a: JSON?, _ b: JSON?, _ path: String) {
            if a == b { return }
            let top = path.split(separator: ".").first.map(String.init) ?? ""
            if secret && (top == "data" || top == "stringData") && path.contains(".") {
                out.append(a == nil ? "+ \(path): (secret value)" : b == nil ? "- \(path): (secret value)" : "~ \(path): (secret value changed)")
                return
            }
            switch (a, b) {
            case (.object(let x)?, .object(let y)?):
                for k in Set(x.keys).union(y.keys).sorted() { walk(x[k], y[k], path.isEmpty ? k : "\(path).\(k)") }
            case (.array(let x)?, .array(let y)?) where x.count == y.count:
                for i in x.indices { walk(x[i], y[i], "\(path)[\(i)]") }
            default:
                if let a { out.append("- \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(a))") }
                if let b { out.append("+ \(path): \(secret && (top == "data" || top == "stringData") ? "(secret values)" : text(b))") }
            }
        }
        walk(old, new, "")
        return out
    }
}
