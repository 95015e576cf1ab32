import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SoBasics
import SoKube
import SoSystem

/// `ClusterClient` over HTTPS: mTLS, bearer token (static, from a file re-read per request, or from an
/// exec credential plugin), basic auth, impersonation, `tls-server-name`, proxies (`proxy-url`,
/// `HTTPS_PROXY`/`NO_PROXY`); server-side apply, paginated lists, retries on 429/5xx/refused connections
/// (honouring Retry-After), one retry with fresh credentials after a 401, API errors decoded from
/// `Status` into one line (a 403 names the RBAC rule that is missing).
public final class HTTPClusterClient: ClusterClient, @unchecked Sendable {
    public let connection: ClusterConnection
    private let client: HTTPClient
    /// What request URLs start with: the server, with its host replaced by `tls-server-name` when one is
    /// set (the connection still goes to the server's host: `dnsOverride`).
    let base: String
    /// The server as the kubeconfig names it, for messages.
    let server: String
    /// The `Host` header when `base` names `tls-server-name` instead of the server.
    let hostHeader: String?
    let tls: TLSConfiguration
    /// Whether requests go through a proxy (an exec then runs kubectl: `exec` speaks to the server directly).
    let proxied: Bool
    let credentials: CredentialSource
    private let lock = NSLock()
    /// The TLS configuration with the client certificate an exec plugin gave last (a new one opens new connections).
    private var execTLS: (certificate: Data, key: Data, configuration: TLSConfiguration)?
    /// The TLS context of the kubeconfig's configuration, made once (an exec connects on its own: a claim's two).
    private var kubeconfigContext: NIOSSLContext?
    public var maxAttempts = 3
    /// Tracing: one debug line per HTTP attempt, `METHOD path status milliseconds` (SO_TRACE_API=1 shows
    /// them); the same logger goes to AsyncHTTPClient for its trace-level lines. Never headers or bodies.
    public var logger = Logger(label: "so.api")

    public convenience init(_ connection: ClusterConnection) throws {
        try self.init(connection, effects: .live())
    }

    /// - Parameter effects: what credentials need besides the network (exec plugins, token files, the terminal).
    public init(_ connection: ClusterConnection, effects: CredentialEffects) throws {
        self.connection = connection
        credentials = CredentialSource(connection, effects: effects)
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            if connection.insecureSkipTLSVerify {
                tls.certificateVerification = .none
            } else if let ca = connection.caPEM {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(ca)))
            }
            if let cert = connection.clientCertificatePEM, let key = connection.clientKeyPEM {
                tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(cert)).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key), format: .pem))
            }
        } catch {
            throw SoError(
                "cannot load the TLS material of context '\(connection.contextName)': \(error)",
                hint: "check the kubeconfig's certificate-authority and client-certificate/key entries")
        }
        self.tls = tls
        var config = HTTPClient.Configuration(tlsConfiguration: tls)
        // The connect timeout covers the TLS handshake: 10 s leaves room for a distant managed cluster behind a proxy
        // and for a busy machine (a 2.5 s limit failed handshakes to a local server under load); a refused port fails at once.
        config.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(120))
        config.httpVersion = .automatic
        // A refused or unreachable server fails the request at once (AsyncHTTPClient would otherwise retry the
        // connection until the connect timeout, three times over: ~10 s); `send` retries briefly itself.
        config.connectionPool.retryConnectionEstablishment = false
        config.proxy = try Self.proxy(for: connection, environment: effects.environment)
        proxied = config.proxy != nil
        let server = connection.server.hasSuffix("/") ? String(connection.server.dropLast()) : connection.server
        self.server = server
        // tls-server-name: the URL names it (SNI and the certificate check use it), dnsOverride sends the
        // connection to the server's host, and the Host header stays the server's, as client-go sends them.
        if let name = connection.tlsServerName, !connection.insecureSkipTLSVerify,
            var url = URLComponents(string: server),
            let host = url.host, host.lowercased() != name.lowercased()
        {
            let plainHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            hostHeader =
                (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + (url.port.map { ":\($0)" } ?? "")
            config.dnsOverride = [name: plainHost]
            url.host = name
            base = url.string ?? server
        } else {
            hostHeader = nil
            base = server
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }

    /// The proxy AsyncHTTPClient is given: HTTP CONNECT (with basic proxy authentication) or SOCKS5.
    static func proxy(for connection: ClusterConnection, environment: [String: String]) throws -> HTTPClient
        .Configuration.Proxy?
    {
        guard let p = try ProxySettings.choose(for: connection, environment: environment) else { return nil }
        switch p.kind {
        case .http:
            let auth = p.username.map { HTTPClient.Authorization.basic(username: $0, password: p.password ?? "") }
            return .server(host: p.host, port: p.port, authorization: auth)
        case .https:
            throw SoError(
                "\(p.source) names an https:// proxy (\(p.host):\(p.port)), which so cannot use: it speaks plain HTTP CONNECT or SOCKS5 to proxies",
                hint:
                    "use the proxy's http:// address (the connection to the API server inside it is still TLS) or a socks5:// proxy"
                    + (p.source.hasPrefix("HTTPS") || p.source.hasPrefix("https")
                        ? ", or add the server to NO_PROXY" : ""))
        case .socks5:
            if p.username != nil {
                throw SoError(
                    "\(p.source) names a SOCKS5 proxy with a user and password, which so cannot send (SOCKS5 without authentication only)",
                    hint: "use a SOCKS5 proxy without authentication, or an http:// proxy (its user and password work)")
            }
            return .socksServer(host: p.host, port: p.port)
        }
    }

    deinit { try? client.syncShutdown() }

    public func shutdown() async { try? await client.shutdown() }

    // MARK: ClusterClient

    public func apply(_ object: KubeObject, fieldManager: String, force: Bool) async throws -> JSON {
        let type = try ResourceType.of(object)
        let path = type.path(name: object.name, namespace: object.namespace)
        let body = Data(object.value.compactJSON())
        let (status, data) = try await send(
            .PATCH, path, query: ["fieldManager": fieldManager, "force": force ? "true" : "false"],
            body: body, contentType: "application/apply-patch+yaml")
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: object.reference, verb: "apply", access: Access("patch", type, object.namespace))
        }
        return try JSON.parse(data)
    }

    public func dryRunApply(_ object: KubeObject, fieldManager: String) async throws -> JSON {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(
            .PATCH, type.path(name: object.name, namespace: object.namespace),
            query: ["fieldManager": fieldManager, "force": "true", "dryRun": "All"],
            body: Data(object.value.compactJSON()), contentType: "application/apply-patch+yaml")
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: object.reference, verb: "apply (dry run)",
                access: Access("patch", type, object.namespace))
        }
        return try JSON.parse(data)
    }

    public func create(_ object: KubeObject, fieldManager: String) async throws -> JSON? {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(
            .POST, type.collectionPath(namespace: object.namespace), query: ["fieldManager": fieldManager],
            body: Data(object.value.compactJSON()), contentType: "application/json")
        if status == 409 && Self.reason(data) == "AlreadyExists" { return nil }
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: object.reference, verb: "create", access: Access("create", type, object.namespace)
            )
        }
        return try JSON.parse(data)
    }

    public func update(_ object: KubeObject, resourceVersion: String, fieldManager: String) async throws -> JSON? {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(
            .PUT, type.path(name: object.name, namespace: object.namespace), query: ["fieldManager": fieldManager],
            body: Data(object.value(resourceVersion: resourceVersion).compactJSON()), contentType: "application/json")
        if status == 409 { return nil }
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: object.reference, verb: "update", access: Access("update", type, object.namespace)
            )
        }
        return try JSON.parse(data)
    }

    public func get(_ type: ResourceType, name: String, namespace: String?) async throws -> JSON? {
        let (status, data) = try await send(.GET, type.path(name: name, namespace: namespace))
        if status == 404 {
            try requireKubernetes(data, path: type.path(name: name, namespace: namespace))
            return nil
        }
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: ref(type, name, namespace), verb: "get", access: Access("get", type, namespace))
        }
        return try JSON.parse(data)
    }

    public func list(_ type: ResourceType, namespace: String?, labelSelector: String?) async throws -> [JSON] {
        try await list(type, namespace: namespace, labelSelector: labelSelector, keeping: .all)
    }

    /// Each page of the list (500 objects) as it arrives, its objects read to `shape` (the rest of their bytes
    /// skipped, never built); a page is let go before the next is read.
    public func forEachPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, keeping shape: JSONShape,
        _ body: ([JSON]) throws -> Void
    ) async throws {
        let pageShape: JSONShape
        if case .all = shape { pageShape = .all } else { pageShape = .keys(["items": shape, "metadata": .all]) }
        try await pages(type, namespace: namespace, labelSelector: labelSelector) { data in
            let page = try JSON.parse(data, keeping: pageShape)
            try body(page["items"]?.array ?? [])
            return page
        }
    }

    /// Each page of the server's table (`as=Table`, no objects: `includeObject=None`), its rows as cells by
    /// column name. A row is a tenth of an object's bytes or less, so a page holds ten times as many rows
    /// (4,000: at 1,000 workspaces their 2,002 Deployments are one request, not five). Served from the API
    /// server's cache (`resourceVersion=0` on the first page: it may be a moment behind, which a table of
    /// counts can be): at 1,000 workspaces 50-110 ms instead of 185-440 ms for a read through to etcd.
    public func forEachTablePage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: JSON]]) throws -> Void
    ) async throws {
        try await pages(
            type, namespace: namespace, labelSelector: labelSelector, limit: 4000,
            query: ["includeObject": "None"], firstPage: ["resourceVersion": "0"],
            accept: "application/json;as=Table;v=v1;g=meta.k8s.io"
        ) { data in
            let table = try JSON.parse(data)
            let columns = (table["columnDefinitions"]?.array ?? []).map { $0["name"]?.string ?? "" }
            try body(
                (table["rows"]?.array ?? []).map { row in
                    Dictionary(zip(columns, row["cells"]?.array ?? []), uniquingKeysWith: { first, _ in first })
                })
            return table
        }
    }

    /// Each page of the objects' metadata (`as=PartialObjectMetadataList`: names, labels, annotations; no data,
    /// no spec), their labels handed over. From the API server's cache (`resourceVersion=0` on the first page), 4,000
    /// a page.
    public func forEachLabelsPage(
        _ type: ResourceType, namespace: String?, labelSelector: String?, _ body: ([[String: String]]) throws -> Void
    ) async throws {
        try await pages(
            type, namespace: namespace, labelSelector: labelSelector, limit: 4000, firstPage: ["resourceVersion": "0"],
            accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        ) { data in
            let list = try JSON.parse(data, keeping: .keys(["items": .all, "metadata": .all]))
            try body((list["items"]?.array ?? []).map(labels(of:)))
            return list
        }
    }

    /// The list's pages (`limit`, `continue`; `firstPage`'s options on the first request only): each page's
    /// bytes to `read`, which returns the page read far enough for its `metadata.continue`.
    func pages(
        _ type: ResourceType, namespace: String?, labelSelector: String?, limit: Int = 500,
        query extra: [String: String] = [:], firstPage: [String: String] = [:], accept: String? = nil,
        _ read: (Data) throws -> JSON
    ) async throws {
        var token: String?
        repeat {
            var query = extra.merging(["limit": "\(limit)"]) { _, limit in limit }
            if let labelSelector { query["labelSelector"] = labelSelector }
            // A continue token carries its own resource version: the first page's options are not repeated.
            if let token { query["continue"] = token } else { query.merge(firstPage) { _, first in first } }
            let (status, data) = try await send(
                .GET, type.collectionPath(namespace: namespace), query: query, accept: accept)
            if status == 404 && namespace != nil {
                try requireKubernetes(data, path: type.collectionPath(namespace: namespace))
                return
            }
            guard (200..<300).contains(status) else {
                let object = "\(type.plural)\(namespace.map { " in \($0)" } ?? "")"
                throw apiError(status, data, object: object, verb: "list", access: Access("list", type, namespace))
            }
            token = try read(data).at("metadata", "continue")?.string
            if token?.isEmpty == true { token = nil }
        } while token != nil
    }

    public func patch(_ type: ResourceType, name: String, namespace: String?, mergePatch: Data) async throws -> JSON {
        let (status, data) = try await send(
            .PATCH, type.path(name: name, namespace: namespace), body: mergePatch,
            contentType: "application/merge-patch+json")
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: ref(type, name, namespace), verb: "patch",
                access: Access("patch", type, namespace))
        }
        return try JSON.parse(data)
    }

    public func delete(_ type: ResourceType, name: String, namespace: String?, propagation: DeletePropagation)
        async throws -> Bool
    {
        let body = Data(
            "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"\(propagation.rawValue)\"}".utf8)
        let (status, data) = try await send(
            .DELETE, type.path(name: name, namespace: namespace), body: body, contentType: "application/json")
        if status == 404 {
            try requireKubernetes(data, path: type.path(name: name, namespace: namespace))
            return false
        }
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: ref(type, name, namespace), verb: "delete",
                access: Access("delete", type, namespace))
        }
        return true
    }

    public func delete(_ type: ResourceType, name: String, namespace: String?, resourceVersion: String) async throws
        -> Bool
    {
        let options = YValue.map([
            ("kind", .string("DeleteOptions")), ("apiVersion", .string("v1")),
            ("preconditions", .map([("resourceVersion", .string(resourceVersion))])),
        ])
        let path = type.path(name: name, namespace: namespace)
        let (status, data) = try await send(
            .DELETE, path, body: Data(options.compactJSON()), contentType: "application/json")
        if status == 404 {
            try requireKubernetes(data, path: type.path(name: name, namespace: namespace))
            return false
        }
        if status == 409 { return false }
        guard (200..<300).contains(status) else {
            throw apiError(
                status, data, object: ref(type, name, namespace), verb: "delete",
                access: Access("delete", type, namespace))
        }
        return true
    }

    public func logs(namespace: String, pod: String, options: LogOptions) -> AsyncThrowingStream<String, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var query: [String: String] = [:]
                    if let c = options.container { query["container"] = c }
                    if options.follow { query["follow"] = "true" }
                    if let t = options.tailLines { query["tailLines"] = String(t) }
                    if let s = options.sinceSeconds { query["sinceSeconds"] = String(s) }
                    if options.timestamps { query["timestamps"] = "true" }
                    if options.previous { query["previous"] = "true" }
                    let path = "/api/v1/namespaces/\(namespace)/pods/\(pod)/log"
                    let response = try await streaming(timeout: .hours(24)) { try logRequest(path, query, $0) }
                    guard response.status.code < 300 else {
                        let data = try await response.body.collect(upTo: 1 << 20)
                        throw apiError(
                            Int(response.status.code), Data(data.readableBytesView), object: "Pod \(namespace)/\(pod)",
                            verb: "read logs of",
                            access: Access(verb: "get", group: "", resource: "pods/log", namespace: namespace))
                    }
                    for try await chunk in response.body {
                        continuation.yield(String(buffer: chunk))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func changes(_ type: ResourceType, namespace: String, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        watch(type, namespace: namespace, labelSelector: labelSelector, seconds: seconds, added: false)
    }

    public func watchAll(_ type: ResourceType, labelSelector: String?, seconds: Int)
        -> AsyncThrowingStream<JSON, Error>
    {
        watch(type, namespace: nil, labelSelector: labelSelector, seconds: seconds, added: true)
    }

    /// A watch of `type` in `namespace` (nil: every one): the objects changed or deleted, and with `added` the
    /// ones added too (a watch's first events, one for each object there is, among them).
    private func watch(_ type: ResourceType, namespace: String?, labelSelector: String?, seconds: Int, added: Bool)
        -> AsyncThrowingStream<JSON, Error>
    {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var query = ["watch": "true", "timeoutSeconds": String(max(1, seconds))]
                    if let labelSelector, !labelSelector.isEmpty { query["labelSelector"] = labelSelector }
                    let path = type.collectionPath(namespace: namespace)
                    let began = DispatchTime.now().uptimeNanoseconds
                    let response = try await streaming(timeout: .seconds(Int64(seconds) + 10)) {
                        try makeRequest(.GET, path, query: query, credentials: $0)
                    }
                    logger.debug(
                        "WATCH \(path) \(response.status.code) \((DispatchTime.now().uptimeNanoseconds - began) / 1_000_000)ms"
                    )
                    guard response.status.code < 300 else {
                        let data = try await response.body.collect(upTo: 1 << 20)
                        throw apiError(
                            Int(response.status.code), Data(data.readableBytesView), object: path, verb: "watch",
                            access: Access("watch", type, namespace))
                    }
                    // One event a line: {"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}.
                    var pending: [UInt8] = []
                    for try await chunk in response.body {
                        pending.append(contentsOf: chunk.readableBytesView)
                        while let end = pending.firstIndex(of: 10) {
                            let line = Data(pending[..<end])
                            pending.removeSubrange(...end)
                            guard !line.isEmpty, let event = try? JSON.parse(line) else { continue }
                            switch event["type"]?.string {
                            case "MODIFIED", "DELETED": continuation.yield(event["object"] ?? .null)
                            case "ADDED" where added: continuation.yield(event["object"] ?? .null)
                            case "ERROR":
                                // Too old a version, or the watch's time is up: the caller lists and polls.
                                continuation.finish()
                                return
                            default: continue
                            }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Transport

    /// A request whose body the caller reads as it arrives (logs, a watch): sent once more with fresh credentials
    /// when the server refuses them (401), as `send` does.
    func streaming(timeout: TimeAmount, _ request: (RequestCredentials) throws -> HTTPClientRequest) async throws
        -> HTTPClientResponse
    {
        let used = try await credentials.current()
        let response = try await client.execute(try request(used), timeout: timeout, logger: logger)
        guard response.status.code == 401, let fresh = try await credentials.afterUnauthorized(used) else {
            return response
        }
        return try await client.execute(try request(fresh), timeout: timeout, logger: logger)
    }

    func logRequest(_ path: String, _ query: [String: String], _ credentials: RequestCredentials) throws
        -> HTTPClientRequest
    {
        var request = try makeRequest(.GET, path, query: query, credentials: credentials)
        request.headers.replaceOrAdd(name: "Accept", value: "*/*")
        return request
    }

    func ref(_ type: ResourceType, _ name: String, _ namespace: String?) -> String {
        namespace.map { "\(type.kind) \($0)/\(name)" } ?? "\(type.kind) \(name)"
    }

    func makeRequest(
        _ method: HTTPMethod, _ path: String, query: [String: String] = [:], credentials: RequestCredentials
    ) throws -> HTTPClientRequest {
        var url = base + path
        if !query.isEmpty {
            var comps = URLComponents()
            comps.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            url += "?" + (comps.percentEncodedQuery ?? "")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "so")
        if let hostHeader { request.headers.add(name: "Host", value: hostHeader) }
        if let authorization = credentials.authorization {
            request.headers.add(name: "Authorization", value: authorization)
        }
        for (name, value) in connection.impersonation?.headers ?? [] { request.headers.add(name: name, value: value) }
        if let cert = credentials.clientCertificatePEM, let key = credentials.clientKeyPEM {
            request.tlsConfiguration = try tlsConfiguration(certificate: cert, key: key)
        }
        return request
    }

    /// The TLS configuration with an exec plugin's client certificate, built once per certificate.
    func tlsConfiguration(certificate: Data, key: Data) throws -> TLSConfiguration {
        if let c = lock.withLock({ execTLS }), c.certificate == certificate, c.key == key { return c.configuration }
        var config = tls
        do {
            config.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificate)).map { .certificate($0) }
            config.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key), format: .pem))
        } catch {
            let plugin = connection.exec?.programName ?? ""
            throw SoError(
                "the client certificate the exec credential plugin '\(plugin)' of \(connection.who) gave cannot be loaded",
                hint: "the plugin must print PEM in status.clientCertificateData and status.clientKeyData")
        }
        lock.withLock { execTLS = (certificate, key, config) }
        return config
    }

    /// The NIOSSL context of the kubeconfig's TLS configuration (what an exec's own connection uses), made once.
    func sslContext() throws -> NIOSSLContext {
        if let made = lock.withLock({ kubeconfigContext }) { return made }
        let made = try NIOSSLContext(configuration: tls)
        lock.withLock { kubeconfigContext = made }
        return made
    }

    /// A 404 from a Kubernetes API server carries a `Status` object; anything else (a web server, a proxy's
    /// page) means the kubeconfig points at something that is not one, which must not read as "not found".
    func requireKubernetes(_ data: Data, path: String) throws {
        if (try? JSON.parse(data))?["kind"]?.string == "Status" { return }
        throw SoError(
            "\(server) (context \(connection.contextName)) is not a Kubernetes API server: GET \(path) answered 404 without a Kubernetes Status",
            hint: "check the kubeconfig's server address ('kubectl cluster-info' with the same kubeconfig and context)",
            exitCode: SoError.exitUnreachable)
    }

    /// One request with retries on 429, 5xx and connection failures.
    func send(
        _ method: HTTPMethod, _ path: String, query: [String: String] = [:], body: Data? = nil,
        contentType: String? = nil, accept: String? = nil
    ) async throws -> (Int, Data) {
        var attempt = 0
        var delay = 0.2
        let first = DispatchTime.now().uptimeNanoseconds
        var used = try await credentials.current()
        var reauthorized = false
        while true {
            attempt += 1
            var request = try makeRequest(method, path, query: query, credentials: used)
            if let accept { request.headers.replaceOrAdd(name: "Accept", value: accept) }
            if let body {
                request.body = .bytes(ByteBuffer(bytes: body))
                if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            }
            do {
                let began = DispatchTime.now().uptimeNanoseconds
                let response = try await client.execute(request, timeout: .seconds(120), logger: logger)
                let buffer = try await response.body.collect(upTo: 64 << 20)
                let status = Int(response.status.code)
                logger.debug(
                    "\(method.rawValue) \(path) \(status) \((DispatchTime.now().uptimeNanoseconds - began) / 1_000_000)ms"
                )
                // Refused credentials: once more with fresh ones (the exec plugin run again, the token file read again).
                if status == 401 && !reauthorized, let fresh = try await credentials.afterUnauthorized(used) {
                    (used, reauthorized) = (fresh, true)
                    attempt -= 1
                    continue
                }
                if (status == 429 || status >= 500) && attempt < maxAttempts {
                    let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
                    try await Task.sleep(nanoseconds: UInt64((retryAfter ?? delay) * 1e9))
                    delay = min(delay * 2, 5)
                    continue
                }
                return (status, Data(buffer.readableBytesView))
            } catch let error as SoError {
                throw error
            } catch {
                // A connection that fails is tried again only briefly: a server that is down is reported in ~2-3 s.
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - first) / 1e9
                if attempt < maxAttempts && elapsed < 1 && Self.failure(error).retryable {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                    delay = min(delay * 2, 5)
                    continue
                }
                throw SoError(
                    "cannot reach the API server \(server) (context \(connection.contextName)): \(Self.describe(error))",
                    hint: Self.hint(for: error), exitCode: SoError.exitUnreachable)
            }
        }
    }

    /// What went wrong on the way to the API server, read from the error's type and errno (NIO's and
    /// AsyncHTTPClient's errors), never from its text.
    enum TransportFailure: Equatable {
        case refused, reset, timedOut, closed, unreachable, noSuchHost, tls, other

        /// Worth one more attempt: the server may be restarting or a connection was cut. A TLS failure,
        /// an unknown host or anything else will not heal in a second.
        var retryable: Bool { [.refused, .reset, .timedOut, .closed, .unreachable].contains(self) }
    }

    static func failure(_ error: Error) -> TransportFailure {
        switch error {
        case let e as NIOConnectionError:
            // Happy eyeballs: one error per address tried; DNS errors when the name did not resolve.
            if let first = e.connectionErrors.first { return failure(first.error) }
            return e.dnsAError != nil || e.dnsAAAAError != nil ? .noSuchHost : .other
        case let e as IOError:
            switch e.errnoCode {
            case ECONNREFUSED: return .refused
            case ECONNRESET, EPIPE, ECONNABORTED: return .reset
            case ETIMEDOUT: return .timedOut
            case ENETUNREACH, EHOSTUNREACH: return .unreachable
            default: return .other
            }
        case let e as ChannelError:
            switch e {
            case .connectTimeout: return .timedOut
            case .ioOnClosedChannel, .alreadyClosed, .eof, .inputClosed, .outputClosed: return .closed
            case .writeHostUnreachable: return .unreachable
            default: return .other
            }
        case let e as HTTPClientError:
            switch e {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout:
                return .timedOut
            case .remoteConnectionClosed: return .closed
            case .tlsHandshakeTimeout: return .tls
            default: return .other
            }
        case is SocketAddressError: return .noSuchHost
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: return .tls
        default: return .other
        }
    }

    /// The failure in a few words for the one-line error (the error's own text only when it is none of the known ones).
    static func describe(_ error: Error) -> String {
        switch failure(error) {
        case .refused: return "connection refused"
        case .reset: return "connection reset"
        case .timedOut: return "timed out"
        case .closed: return "connection closed"
        case .unreachable: return "network is unreachable"
        case .noSuchHost: return "no such host"
        case .tls:
            return
                "TLS handshake failed (\(String(describing: error).replacingOccurrences(of: "\n", with: " ").prefix(160)))"
        case .other:
            return String(String(describing: error).replacingOccurrences(of: "\n", with: " ").lowercased().prefix(200))
        }
    }

    static func hint(for error: Error) -> String {
        if failure(error) == .tls {
            return
                "the server's certificate does not match the kubeconfig's CA or server name; check certificate-authority-data and server"
        }
        return "is the cluster running? check 'kubectl cluster-info' with the same kubeconfig and context"
    }

    /// The `reason` of a Kubernetes `Status` body (`AlreadyExists`, `Conflict` …).
    static func reason(_ data: Data) -> String? { (try? JSON.parse(data))?["reason"]?.string }

    /// What a request asks RBAC for: the verb, the resource (`group`, plural `resource[/subresource]`) and namespace.
    struct Access: Equatable {
        var verb: String
        var group: String
        var resource: String
        var namespace: String?

        init(verb: String, group: String, resource: String, namespace: String?) {
            self.verb = verb
            self.group = group
            self.resource = resource
            self.namespace = namespace
        }

        init(_ verb: String, _ type: ResourceType, _ namespace: String?) {
            self.init(
                verb: verb, group: type.apiVersion.contains("/") ? String(type.apiVersion.prefix { $0 != "/" }) : "",
                resource: type.plural,
                namespace: type.namespaced ? namespace : nil)
        }

        /// `deployments.apps`, `pods/log`: as kubectl names a resource.
        var qualified: String { group.isEmpty ? resource : "\(resource).\(group)" }

        /// The RBAC rule that allows it.
        var rule: String {
            "grant: apiGroups: [\"\(group)\"], resources: [\"\(resource)\"], verbs: [\"\(verb)\"] "
                + (namespace.map { "(namespace \($0))" } ?? "(cluster-wide: a ClusterRole and ClusterRoleBinding)")
        }

        /// What a `Forbidden` Status says was refused (`User "u" cannot patch resource "deployments" in API group "apps"
        /// in the namespace "demo"`), else nil. Only what is shown is read from the text; what was asked is known.
        static func refused(in message: String) -> (user: String, access: Access)? {
            let pattern =
                #"User "([^"]*)" cannot ([^ ]+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?"#
            guard let re = try? NSRegularExpression(pattern: pattern),
                let m = re.firstMatch(in: message, range: NSRange(message.startIndex..., in: message))
            else { return nil }
            func group(_ i: Int) -> String? { Range(m.range(at: i), in: message).map { String(message[$0]) } }
            guard let user = group(1), let verb = group(2), let resource = group(3) else { return nil }
            return (user, Access(verb: verb, group: group(4) ?? "", resource: resource, namespace: group(5)))
        }
    }

    /// A Kubernetes `Status` body as one line naming the object; a 401 names the user and context, a 403
    /// the verb, resource and namespace refused, with the RBAC rule that would allow it as the hint.
    func apiError(_ status: Int, _ data: Data, object: String, verb: String, access: Access) -> SoError {
        let json = try? JSON.parse(data)
        let message = json?["message"]?.string ?? String(decoding: data.prefix(300), as: UTF8.self)
        let reason = json?["reason"]?.string ?? "HTTP \(status)"
        switch status {
        case 401:
            return SoError(
                "cannot \(verb) \(object): the API server \(server) does not accept the credentials of \(connection.who) (\(reason))",
                hint: unauthorizedHint)
        case 403:
            let refused = Access.refused(in: message)
            let asked = refused?.access ?? access
            let known = refused.map { ", authenticated as \"\($0.user)\"," } ?? ""
            let scope = asked.namespace.map { "in namespace \($0)" } ?? "at the cluster scope"
            return SoError(
                "cannot \(verb) \(object): \(connection.who)\(known) may not \(asked.verb) \(asked.qualified) \(scope) (\(reason))",
                hint: asked.rule)
        default:
            let hint: String
            switch status {
            case 404: hint = "the object or its namespace does not exist"
            case 409: hint = "someone else changed it; run the command again"
            case 422: hint = "the object is invalid; 'so deployment render' shows what was sent"
            default: hint = "see 'kubectl get events' in the namespace"
            }
            return SoError(
                "cannot \(verb) \(object): \(message.prefix(1).lowercased() + message.dropFirst()) (\(reason))",
                hint: hint)
        }
    }

    /// What to do about refused credentials, by where they came from.
    var unauthorizedHint: String {
        let c = connection
        if let plugin = c.exec {
            return
                "the credential of the exec plugin '\(plugin.programName)' was refused, also after running it again: log in again with its tool, "
                + "or check users[].user.exec in \(c.source ?? "the kubeconfig")"
        }
        if c.inCluster {
            return
                "the pod's service account token is not accepted by this cluster (revoked, or the account was deleted)"
        }
        if let file = c.tokenFile {
            return "the token in \(file) is refused (expired, revoked, or for another cluster); refresh it"
        }
        if c.token != nil {
            return
                "the kubeconfig's token for this user is refused (expired, revoked, or for another cluster); get a new one"
        }
        if c.clientCertificatePEM != nil {
            return
                "the client certificate is refused (expired, or signed by a CA this cluster does not trust); get a fresh kubeconfig for the cluster"
        }
        if c.basicAuth != nil {
            return
                "the username and password are refused (API servers since Kubernetes 1.19 take no basic authentication)"
        }
        return "the user has no credentials: give it a token, a client certificate or an exec plugin in the kubeconfig"
    }
}

extension CredentialEffects {
    /// This process: its programs, files, environment, terminal and clock.
    public static func live() -> CredentialEffects {
        let env = ProcessInfo.processInfo.environment
        return CredentialEffects(
            processes: LocalProcessRunner(environment: env), fs: LocalFileSystem(), environment: env,
            stdinIsTerminal: isatty(0) == 1, clock: SystemClock())
    }
}
