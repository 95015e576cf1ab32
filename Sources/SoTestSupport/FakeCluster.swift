import Foundation
import SoBasics
import SoKube

/// An in-memory API server: stores applied objects, lists by label selector, deletes, and can be told
/// to fail. Records every call so tests can prove which effects happened.
public final class FakeCluster: ClusterClient, @unchecked Sendable {
    public struct Key: Hashable, Sendable {
        public var type: ResourceType
        public var namespace: String?
        public var name: String
    }

    private let lock = NSLock()
    private var objects: [Key: JSON] = [:] {
        // A watch's events (`changes`): every object changed or deleted, to the watches that match it.
        didSet {
            guard emitsChanges, !watches.isEmpty else { return }
            for (key, old) in oldValue where objects[key] != old {
                let now = objects[key] ?? old
                for w in watches
                where w.type == key.type && (w.namespace == nil || w.namespace == key.namespace)
                    && Self.matches(now.labels, selector: w.selector)
                {
                    w.events.yield(now)
                }
            }
            // Objects added reach the watches of every namespace (`watchAll`'s).
            for (key, now) in objects where oldValue[key] == nil {
                for w in watches
                where w.added && w.type == key.type && Self.matches(now.labels, selector: w.selector) {
                    w.events.yield(now)
                }
            }
        }
    }
    private struct Watch {
        var type: ResourceType
        /// Nil: every namespace (`watchAll`'s, which also hears of objects added).
        var namespace: String?
        var selector: String?
        var events: AsyncThrowingStream<JSON, Error>.Continuation
        var added = false
    }
    private var watches: [Watch] = []
    /// The watches asked for (`changes`), as "watch TYPE NAMESPACE": not in `calls`, which tests hold exact.
    public private(set) var watched: [String] = []
    /// Whether watches report changes: off unless a test asks (a wake-up by a change does not advance a test's
    /// clock, and a hook that changes an object at each look would be woken at once, for ever).
    public var emitsChanges = false
    /// Who a SelfSubjectReview says the caller is.
    public var userName = "fake-user"
    private var order: [Key] = []
    private var counter = 0
    /// "labels/KEY" and "annotations/KEY" the last apply of each object set.
    private var appliedMetadata: [Key: Set<String>] = [:]
    private var recorded: [String] = []
    /// Every call so far, in order (read under the lock: a renewer or a second client may be recording meanwhile).
    public var calls: [String] { locked { recorded } }
    /// Errors to throw for calls whose description starts with the key (e.g. "apply Deployment").
    public var failures: [String: SoError] = [:]
    /// Logs returned per "namespace/pod/container".
    public var podLogs: [String: String] = [:]
    /// Answers the next logs calls give per "namespace/pod/container", in order, before `podLogs` (a log that
    /// changes between two asks).
    public var podLogAnswers: [String: [String]] = [:]
    /// What the next execs through the API server end with, in order (each told to `output` when the exec asks for
    /// it); none left: `exec` is nil, and the caller runs kubectl (the fake process runner's).
    public var execOutcomes: [ExecOutcome] = []
    /// What each `portForward` answers, in turn (none left: nil, as a client that cannot forward); each one asked is
    /// recorded with what it sent.
    public var portForwardOutcomes: [PortForwardOutcome] = []
    /// What each `portForward` that was answered sent.
    public var portForwardSent: [String] = []
    /// Called after every apply, e.g. to mark Deployments available.
    public var onApply: (@Sendable (inout JSON) -> Void)?
    /// Runs after an apply is stored, outside the cluster's lock: it may seed what a controller would make (the
    /// pods of a Deployment) before the caller's next request sees the cluster.
    public var afterApply: (@Sendable (JSON) throws -> Void)?

    public init() {}

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Called with each call's description before the call takes effect, e.g. to let another client
    /// change an object between two requests.
    public var beforeCall: (@Sendable (String) -> Void)?
    /// The same, awaited: e.g. to run a second client's whole command while this call is under way.
    public var beforeCallAsync: (@Sendable (String) async -> Void)?

    private func record(_ call: String) async throws {
        let failure = locked { () -> SoError? in
            recorded.append(call)
            return failures.first { call.hasPrefix($0.key) }?.value
        }
        if let failure { throw failure }
        beforeCall?(call)
        if let hook = beforeCallAsync { await hook(call) }
    }

    public func object(_ kind: String, _ name: String, namespace: String? = nil) -> JSON? {
        lock.lock()
        defer { lock.unlock() }
        return objects.first { $0.key.type.kind == kind && $0.key.name == name && $0.key.namespace == namespace }?.value
    }

    public var all: [(Key, JSON)] {
        lock.lock()
        defer { lock.unlock() }
        return order.compactMap { k in objects[k].map { (k, $0) } }
    }

    /// Puts an object in place as if someone else had created it.
    public func seed(_ object: KubeObject) throws {
        let type = try ResourceType.of(object)
        let key = Key(type: type, namespace: type.namespaced ? object.namespace : nil, name: object.name)
        var json = try JSON.parse(Data(object.json().utf8))
        lock.lock()
        defer { lock.unlock() }
        // Under the lock: the counter is the cluster's (a hook seeding a pod raced another task's apply, TSan).
        stamp(&json)
        if objects[key] == nil { order.append(key) }
        objects[key] = json
    }

    /// Takes an object away as if someone else had deleted it (no call recorded).
    public func remove(_ kind: String, _ name: String, namespace: String?) {
        lock.lock()
        defer { lock.unlock() }
        guard
            let key = objects.keys.first(where: { $0.type.kind == kind && $0.name == name && $0.namespace == namespace }
            )
        else { return }
        objects.removeValue(forKey: key)
        order.removeAll { $0 == key }
    }

    public func update(_ kind: String, _ name: String, namespace: String?, _ change: (inout JSON) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard
            let key = objects.keys.first(where: { $0.type.kind == kind && $0.name == name && $0.namespace == namespace }
            ),
            var object = objects[key]
        else { return }
        change(&object)
        objects[key] = object
    }

    private func stamp(_ json: inout JSON) {
        guard case .object(var o) = json, case .object(var meta)? = o["metadata"] else { return }
        counter += 1
        if meta["uid"] == nil { meta["uid"] = .string("uid-\(counter)") }
        meta["resourceVersion"] = .string(String(counter))
        if meta["creationTimestamp"] == nil { meta["creationTimestamp"] = .string("2026-01-01T00:00:00Z") }
        o["metadata"] = .object(meta)
        json = .object(o)
    }

    public func apply(_ object: KubeObject, fieldManager: String, force: Bool) async throws -> JSON {
        try await record("apply \(object.kind) \(object.namespace.map { "\($0)/" } ?? "")\(object.name)")
        let type = try ResourceType.of(object)
        try requireNamespace(of: object, type)
        var json = try JSON.parse(Data(object.json().utf8))
        let key = Key(type: type, namespace: type.namespaced ? object.namespace : nil, name: object.name)
        let stored = locked {
            if case .object(var o) = json, let old = objects[key], case .object(let oldObject) = old {
                if let meta = oldObject["metadata"]?.object, case .object(var newMeta)? = o["metadata"] {
                    newMeta["uid"] = meta["uid"]
                    newMeta["creationTimestamp"] = meta["creationTimestamp"]
                    // Server-side apply removes only the labels and annotations an earlier apply set; those a
                    // create or a patch set stay.
                    for field in ["labels", "annotations"] {
                        var merged = newMeta[field]?.object ?? [:]
                        for (k, v) in meta[field]?.object ?? [:]
                        where merged[k] == nil && !(appliedMetadata[key]?.contains(field + "/" + k) ?? false) {
                            merged[k] = v
                        }
                        newMeta[field] = merged.isEmpty ? nil : .object(merged)
                    }
                    o["metadata"] = .object(newMeta)
                }
                if o["status"] == nil, let status = oldObject["status"] { o["status"] = status }
                json = .object(o)
            }
            let applied = Set(object.labels.map { "labels/" + $0.0 } + object.annotations.map { "annotations/" + $0.0 })
            stamp(&json)
            onApply?(&json)
            if objects[key] == nil { order.append(key) }
            objects[key] = json
            appliedMetadata[key] = applied
            return json
        }
        try afterApply?(stored)
        return stored
    }

    /// Admits the object as `apply` would (its namespace must exist; `failures` apply as "dry-run KIND …")
    /// and returns it as it would be stored, storing nothing.
    public func dryRunApply(_ object: KubeObject, fieldManager: String) async throws -> JSON {
        try await record("dry-run \(object.kind) \(object.namespace.map { "\($0)/" } ?? "")\(object.name)")
        let type = try ResourceType.of(object)
        try requireNamespace(of: object, type)
        var json = try JSON.parse(Data(object.json().utf8))
        locked { stamp(&json) }
        return json
    }

    public func create(_ object: KubeObject, fieldManager: String) async throws -> JSON? {
        try await record("create \(object.kind) \(object.namespace.map { "\($0)/" } ?? "")\(object.name)")
        let type = try ResourceType.of(object)
        try requireNamespace(of: object, type)
        let key = Key(type: type, namespace: type.namespaced ? object.namespace : nil, name: object.name)
        var json = try JSON.parse(Data(object.json().utf8))
        // A review is answered, never stored (as the API server does): who the caller is.
        if type == .selfSubjectReview {
            return .object([
                "apiVersion": .string(type.apiVersion), "kind": .string(type.kind),
                "status": .object(["userInfo": .object(["username": .string(userName)])]),
            ])
        }
        return locked {
            if objects[key] != nil { return nil }
            appliedMetadata[key] = nil
            stamp(&json)
            onApply?(&json)
            order.append(key)
            objects[key] = json
            return json
        }
    }

    public func update(_ object: KubeObject, resourceVersion: String, fieldManager: String) async throws -> JSON? {
        try await record("update \(object.kind) \(object.namespace.map { "\($0)/" } ?? "")\(object.name)")
        let type = try ResourceType.of(object)
        let key = Key(type: type, namespace: type.namespaced ? object.namespace : nil, name: object.name)
        var json = try JSON.parse(Data(object.json().utf8))
        return try locked {
            guard let old = objects[key] else {
                throw SoError(
                    "cannot update \(object.reference): not found (NotFound)",
                    hint: "the object or its namespace does not exist")
            }
            guard old.at("metadata", "resourceVersion")?.string == resourceVersion else { return nil }
            if case .object(var o) = json, case .object(var meta)? = o["metadata"] {
                meta["uid"] = old.at("metadata", "uid")
                meta["creationTimestamp"] = old.at("metadata", "creationTimestamp")
                o["metadata"] = .object(meta)
                json = .object(o)
            }
            stamp(&json)
            objects[key] = json
            return json
        }
    }

    private func requireNamespace(of object: KubeObject, _ type: ResourceType) throws {
        if type.namespaced, let ns = object.namespace, !object.isKind(.namespace) {
            let hasNamespace = locked { objects.keys.contains { $0.type == .namespace && $0.name == ns } }
            if !hasNamespace {
                throw SoError(
                    "cannot apply \(object.reference): namespaces \"\(ns)\" not found (NotFound)",
                    hint: "the object or its namespace does not exist")
            }
            // As the API server: nothing new in a namespace being deleted.
            let terminating = locked {
                objects[Key(type: .namespace, namespace: nil, name: ns)]?.at("status", "phase")?.string == "Terminating"
            }
            if terminating {
                throw SoError(
                    "cannot create \(object.reference): unable to create new content in namespace \(ns) because it is being terminated (Forbidden)",
                    hint: "see 'kubectl get events' in the namespace")
            }
        }
    }

    public func get(_ type: ResourceType, name: String, namespace: String?) async throws -> JSON? {
        try await record("get \(type.kind) \(namespace.map { "\($0)/" } ?? "")\(name)")
        return locked { objects[Key(type: type, namespace: type.namespaced ? namespace : nil, name: name)] }
    }

    public func list(_ type: ResourceType, namespace: String?, labelSelector: String?) async throws -> [JSON] {
        try await record("list \(type.kind)\(namespace.map { " \($0)" } ?? "")\(labelSelector.map { " \($0)" } ?? "")")
        return listed(type, namespace: namespace, labelSelector: labelSelector)
    }

    /// In the API server's order (by namespace, then name), not the order of the applies (a start applies a
    /// stage's objects at once).
    private func listed(_ type: ResourceType, namespace: String?, labelSelector: String?) -> [JSON] {
        locked {
            order.filter { $0.type == type && (namespace == nil || $0.namespace == namespace) }
                .sorted { ($0.namespace ?? "", $0.name) < ($1.namespace ?? "", $1.name) }
                .compactMap { objects[$0] }
                .filter { Self.matches($0.labels, selector: labelSelector) }
        }
    }

    /// The labels of the objects listed (the API server's metadata list), recorded as `labels KIND [NS] [SELECTOR]`.
    public func forEachLabelsPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: String]]) throws -> Void
    ) async throws {
        try await record(
            "labels \(type.kind)\(namespace.map { " \($0)" } ?? "")\(labelSelector.map { " \($0)" } ?? "")")
        try body(listed(type, namespace: namespace, labelSelector: labelSelector).map(labels(of:)))
    }

    /// The table the API server prints for Deployments and Secrets (the kinds tests asked for so far): its cells as
    /// the server fills them from each object (a Secret's: its name, type and how many keys, never the data).
    public func forEachTablePage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: JSON]]) throws -> Void
    ) async throws {
        try await record(
            "table \(type.kind)\(namespace.map { " \($0)" } ?? "")\(labelSelector.map { " \($0)" } ?? "")")
        let objects = listed(type, namespace: namespace, labelSelector: labelSelector)
        switch type {
        case .deployment: try body(objects.map(Self.deploymentRow))
        case .secret:
            try body(
                objects.map {
                    [
                        "Name": .string($0.name), "Type": .string($0["type"]?.string ?? "Opaque"),
                        "Data": .number(Double(($0["data"]?.object ?? [:]).count)),
                    ]
                })
        default: throw SoError("fake cluster: no table of \(type.kind) (a test did not expect one)")
        }
    }

    static func deploymentRow(_ d: JSON) -> [String: JSON] {
        let count = { (key: String) in d.at("status", key)?.int ?? 0 }
        let selector = (d.at("spec", "selector", "matchLabels")?.object ?? [:]).sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.string ?? "")" }.joined(separator: ",")
        return [
            "Name": .string(d.name),
            "Ready": .string("\(count("readyReplicas"))/\(d.at("spec", "replicas")?.int ?? 1)"),
            "Up-to-date": .number(Double(count("updatedReplicas"))),
            "Available": .number(Double(count("availableReplicas"))), "Selector": .string(selector),
        ]
    }

    public func patch(_ type: ResourceType, name: String, namespace: String?, mergePatch: Data) async throws -> JSON {
        try await record("patch \(type.kind) \(namespace.map { "\($0)/" } ?? "")\(name)")
        let patch = try JSON.parse(mergePatch)
        return try locked {
            let key = Key(type: type, namespace: type.namespaced ? namespace : nil, name: name)
            guard let old = objects[key] else {
                throw SoError(
                    "cannot patch \(type.kind) \(name): not found (NotFound)",
                    hint: "the object or its namespace does not exist")
            }
            // A resourceVersion in the patch is a precondition, as the API server takes it.
            if let wanted = patch.at("metadata", "resourceVersion")?.string,
                wanted != old.at("metadata", "resourceVersion")?.string
            {
                throw SoError(
                    "cannot patch \(type.kind) \(name): the object has been modified (Conflict)",
                    hint: "read it again and retry")
            }
            var merged = Self.merge(old, patch)
            stamp(&merged)
            objects[key] = merged
            return merged
        }
    }

    static func merge(_ target: JSON, _ patch: JSON) -> JSON {
        guard case .object(let p) = patch else { return patch }
        var t = target.object
        for (k, v) in p {
            if case .null = v { t.removeValue(forKey: k) } else { t[k] = merge(t[k] ?? .null, v) }
        }
        return .object(t)
    }

    public func delete(_ type: ResourceType, name: String, namespace: String?, propagation: DeletePropagation)
        async throws -> Bool
    {
        try await record("delete \(type.kind) \(namespace.map { "\($0)/" } ?? "")\(name)")
        return locked {
            let key = Key(type: type, namespace: type.namespaced ? namespace : nil, name: name)
            guard objects.removeValue(forKey: key) != nil else { return false }
            order.removeAll { $0 == key }
            appliedMetadata[key] = nil
            if type == .namespace {
                for k in objects.keys where k.namespace == name { objects.removeValue(forKey: k) }
                order.removeAll { $0.namespace == name }
            }
            return true
        }
    }

    /// Deletes only while the object is at `resourceVersion` (recorded as any delete).
    public func delete(_ type: ResourceType, name: String, namespace: String?, resourceVersion: String) async throws
        -> Bool
    {
        try await record("delete \(type.kind) \(namespace.map { "\($0)/" } ?? "")\(name)")
        return locked {
            let key = Key(type: type, namespace: type.namespaced ? namespace : nil, name: name)
            guard objects[key]?.at("metadata", "resourceVersion")?.string == resourceVersion else { return false }
            objects.removeValue(forKey: key)
            order.removeAll { $0 == key }
            appliedMetadata[key] = nil
            return true
        }
    }

    public func exec(_ request: ExecRequest) async throws -> ExecOutcome? {
        let next = locked { () -> ExecOutcome? in
            guard !execOutcomes.isEmpty else { return nil }
            recorded.append(
                "exec \(request.namespace)/\(request.pod)/\(request.container): \(request.command.joined(separator: " "))"
            )
            return execOutcomes.removeFirst()
        }
        guard var outcome = next else { return nil }
        if let output = request.output {
            if !outcome.stdout.isEmpty { output(true, outcome.stdout) }
            outcome.stdout = Data()
        }
        return outcome
    }

    public func portForward(_ request: PortForwardRequest) async -> PortForwardOutcome? {
        guard locked({ !portForwardOutcomes.isEmpty }) else { return nil }
        let sent = String(decoding: await request.send.payload.bytes, as: UTF8.self)
        return locked { () -> PortForwardOutcome? in
            guard !portForwardOutcomes.isEmpty else { return nil }
            recorded.append("portforward \(request.namespace)/\(request.pod):\(request.port)")
            portForwardSent.append(sent)
            return portForwardOutcomes.removeFirst()
        }
    }

    public func logs(namespace: String, pod: String, options: LogOptions) -> AsyncThrowingStream<String, Error> {
        let text = locked { () -> String? in
            recorded.append(
                "logs \(namespace)/\(pod)\(options.container.map { "/\($0)" } ?? "")"
                    + (options.previous ? " previous" : ""))
            let key = "\(namespace)/\(pod)/\(options.container ?? "")"
            if var answers = podLogAnswers[key], !answers.isEmpty {
                let first = answers.removeFirst()
                podLogAnswers[key] = answers
                return first
            }
            return podLogs["\(namespace)/\(pod)/\(options.container ?? "")"] ?? podLogs["\(namespace)/\(pod)"]
        }
        return AsyncThrowingStream { c in
            if let text {
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                if lines.last == "" { lines.removeLast() }
                if let t = options.tailLines { lines = Array(lines.suffix(t)) }
                if !lines.isEmpty { c.yield(lines.joined(separator: "\n") + "\n") }
            }
            c.finish()
        }
    }

    /// Every later change to a matching object (not its creation), until the caller stops reading.
    public func changes(_ type: ResourceType, namespace: String, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        let (stream, continuation) = AsyncThrowingStream<JSON, Error>.makeStream()
        locked {
            watched.append("watch \(type.kind) \(namespace)")
            watches.append(Watch(type: type, namespace: namespace, selector: labelSelector, events: continuation))
        }
        return stream
    }

    public func watchAll(_ type: ResourceType, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        let (stream, continuation) = AsyncThrowingStream<JSON, Error>.makeStream()
        locked {
            watched.append("watch \(type.kind) *")
            watches.append(
                Watch(type: type, namespace: nil, selector: labelSelector, events: continuation, added: true))
        }
        return stream
    }

    /// Equality-based selectors: `a=b,c!=d,e` (what `so` sends).
    public static func matches(_ labels: [String: String], selector: String?) -> Bool {
        guard let selector, !selector.isEmpty else { return true }
        for term in selector.split(separator: ",").map(String.init) {
            if let r = term.range(of: "!=") {
                if labels[String(term[..<r.lowerBound])] == String(term[r.upperBound...]) { return false }
            } else if let r = term.range(of: "=") {
                if labels[String(term[..<r.lowerBound])] != String(term[r.upperBound...]) { return false }
            } else if labels[term] == nil {
                return false
            }
        }
        return true
    }
}
