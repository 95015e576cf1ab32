import Foundation
import SoBasics

extension KubeObject {
    /// An object of one of the kinds `so` renders: `KubeObject(.secret, name: …)`.
    public init(
        _ type: ResourceType, name: String, namespace: String? = nil, labels: [(String, String)] = [],
        annotations: [(String, String)] = [], body: [(String, YValue)] = []
    ) {
        self.init(
            apiVersion: type.apiVersion, kind: type.kind, name: name, namespace: namespace, labels: labels,
            annotations: annotations, body: body)
    }

    /// Whether the object is of `type`'s kind (`o.isKind(.job)`): the kind alone, not the apiVersion.
    public func isKind(_ type: ResourceType) -> Bool { kind == type.kind }
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
    func delete(_ type: ResourceType, name: String, namespace: String?, propagation: DeletePropagation) async throws
        -> Bool
    /// Deletes the object only if it is still at `resourceVersion` (a precondition the API server checks);
    /// false when it is gone or someone changed it since (Conflict).
    func delete(_ type: ResourceType, name: String, namespace: String?, resourceVersion: String) async throws -> Bool
    /// Log text of one container; with `follow`, chunks arrive as the container writes them.
    func logs(namespace: String, pod: String, options: LogOptions) -> AsyncThrowingStream<String, Error>
    /// Changes to the objects of `type` in `namespace` matching `labelSelector` from now on, as the API server
    /// reports them (a watch): each changed or deleted object as it was then, not the ones added (a watch's
    /// first events name every object there is). Ends when the server ends the watch (or after `seconds`),
    /// and at once where there is no watch (the extension's): a caller still lists for what is true.
    func changes(_ type: ResourceType, namespace: String, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    /// Every object of `type` matching `labelSelector` in every namespace, as a watch reports it: first each one
    /// there is (as added), then each one added, changed or deleted, until the server ends the watch (or after
    /// `seconds`). What a reader that keeps one view of the whole cluster wakes on (`so dashboard`); the default
    /// (the extension's) ends at once, and the caller polls.
    func watchAll(_ type: ResourceType, labelSelector: String?, seconds: Int) -> AsyncThrowingStream<JSON, Error>
    /// Every object matching `labelSelector`, handed to `body` a page at a time, so a caller that keeps a
    /// summary of each never holds them all (`so deployment list` over a thousand Deployments), each object
    /// read only as far as `shape` says (the rest may be left out). The default (the extension's) hands over
    /// one page of everything; the live client hands over each page as it arrives, read to `shape`.
    func forEachPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, keeping shape: JSONShape,
        _ body: ([JSON]) throws -> Void
    ) async throws
    /// The API server's table of `type` matching `labelSelector` — the columns `kubectl get` shows, each row
    /// a cell by column name (for Deployments: Name, Ready, Up-to-date, Available, Age, Containers, Images,
    /// Selector) — without the objects, handed to `body` a page at a time. A fraction of the server's work of
    /// sending the objects (`so deployment list` over a thousand Deployments).
    func forEachTablePage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: JSON]]) throws -> Void
    ) async throws
    /// The labels of every object of `type` matching `labelSelector`, a page at a time: the API server's
    /// `PartialObjectMetadataList` (each object's metadata, never its data or spec), from its cache. One request
    /// counts objects by a label's values where a table per value would take one each. The default (the
    /// extension's) lists the objects.
    func forEachLabelsPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: String]]) throws -> Void
    ) async throws
    /// Runs a command in a container through the API server (`pods/exec` over a WebSocket), as `kubectl exec`
    /// does without kubectl's own start and its read of the pod. nil when this client cannot (a proxy between, a
    /// server that offers no stream protocol it speaks): the caller runs kubectl. The default (the extension's)
    /// is nil.
    func exec(_ request: ExecRequest) async throws -> ExecOutcome?
    /// One connection to a port on a pod's loopback through the API server (`pods/portforward` over a WebSocket): what
    /// the pod's side answered. nil when this client cannot (a proxy between): the caller does without. The default
    /// (the extension's) is nil.
    func portForward(_ request: PortForwardRequest) async -> PortForwardOutcome?
}

extension ClusterClient {
    /// No exec of its own: the caller runs kubectl.
    public func exec(_ request: ExecRequest) async throws -> ExecOutcome? { nil }

    /// No port-forward of its own: the caller does without.
    public func portForward(_ request: PortForwardRequest) async -> PortForwardOutcome? { nil }

    /// No watch: the stream ends at once (the caller polls).
    public func watchAll(_ type: ResourceType, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        AsyncThrowingStream { $0.finish() }
    }

    /// No watch: the stream ends at once (the caller polls).
    public func changes(_ type: ResourceType, namespace: String, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        AsyncThrowingStream { $0.finish() }
    }

    /// One page of every object's labels, from the objects listed: the default of `forEachLabelsPage`.
    public func forEachLabelsPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: String]]) throws -> Void
    ) async throws {
        try body(try await list(type, namespace: namespace, labelSelector: labelSelector).map(labels(of:)))
    }

    /// An object's `metadata.labels` whose values are strings.
    public func labels(of object: JSON) -> [String: String] {
        (object.at("metadata", "labels")?.object ?? [:]).compactMapValues(\.string)
    }

    /// One page of everything (a superset of any shape): the default of `forEachPage`.
    public func forEachPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, keeping shape: JSONShape,
        _ body: ([JSON]) throws -> Void
    ) async throws {
        try body(try await list(type, namespace: namespace, labelSelector: labelSelector))
    }

    /// Every object matching `labelSelector`, each read only as far as `shape` says, gathered page by page.
    public func list(_ type: ResourceType, namespace: String?, labelSelector: String?, keeping shape: JSONShape)
        async throws -> [JSON]
    {
        var items: [JSON] = []
        try await forEachPage(type, namespace: namespace, labelSelector: labelSelector, keeping: shape) { items += $0 }
        return items
    }

    /// `forEachPage` keeping whole objects.
    public func forEachPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([JSON]) throws -> Void
    ) async throws {
        try await forEachPage(type, namespace: namespace, labelSelector: labelSelector, keeping: .all, body)
    }

    /// Sets `annotations` on the object with one merge patch (nothing else of it is sent or changed).
    @discardableResult
    public func annotate(_ type: ResourceType, name: String, namespace: String?, _ annotations: [(String, String)])
        async throws -> JSON
    {
        let patch = YValue.map([("metadata", .map([("annotations", .map(annotations.map { ($0.0, .string($0.1)) }))]))])
        return try await self.patch(
            type, name: name, namespace: namespace, mergePatch: Data(JSONWriter.bytes(patch, .compact)))
    }
}
