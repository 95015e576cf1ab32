import Foundation
import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SoBasics
import SoKube

/// `ClusterClient` over HTTPS: mTLS or bearer token, server-side apply, paginated lists, retries on
/// 429/5xx/refused connections (honouring Retry-After), API errors decoded from `Status` into one line.
public final class HTTPClusterClient: ClusterClient, @unchecked Sendable {
    public let connection: ClusterConnection
    private let client: HTTPClient
    private let base: String
    public var maxAttempts = 3
    /// Tracing: one debug line per HTTP attempt, `METHOD path status milliseconds` (SO_TRACE_API=1 shows
    /// them); the same logger goes to AsyncHTTPClient for its trace-level lines. Never headers or bodies.
    public var logger = Logger(label: "so.api")

    public init(_ connection: ClusterConnection) throws {
        self.connection = connection
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
            throw SoError("cannot load the TLS material of context '\(connection.contextName)': \(error)",
                          hint: "check the kubeconfig's certificate-authority and client-certificate/key entries")
        }
        var config = HTTPClient.Configuration(tlsConfiguration: tls)
        config.timeout = HTTPClient.Configuration.Timeout(connect: .milliseconds(2500), read: .seconds(120))
        config.httpVersion = .automatic
        // A refused or unreachable server fails the request at once (AsyncHTTPClient would otherwise retry the
        // connection until the connect timeout, three times over: ~10 s); `send` retries briefly itself.
        config.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        base = connection.server.hasSuffix("/") ? String(connection.server.dropLast()) : connection.server
    }

    deinit { try? client.syncShutdown() }

    public func shutdown() async { try? await client.shutdown() }

    // MARK: ClusterClient

    public func apply(_ object: KubeObject, fieldManager: String, force: Bool) async throws -> JSON {
        let type = try ResourceType.of(object)
        let path = type.path(name: object.name, namespace: object.namespace)
        let body = Data(object.value.compactJSON())
        let (status, data) = try await send(.PATCH, path, query: ["fieldManager": fieldManager, "force": force ? "true" : "false"],
                                            body: body, contentType: "application/apply-patch+yaml")
        guard (200..<300).contains(status) else { throw apiError(status, data, object: object.reference, verb: "apply") }
        return try JSON.parse(data)
    }

    public func dryRunApply(_ object: KubeObject, fieldManager: String) async throws -> JSON {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(.PATCH, type.path(name: object.name, namespace: object.namespace),
                                            query: ["fieldManager": fieldManager, "force": "true", "dryRun": "All"],
                                            body: Data(object.value.compactJSON()), contentType: "application/apply-patch+yaml")
        guard (200..<300).contains(status) else { throw apiError(status, data, object: object.reference, verb: "apply (dry run)") }
        return try JSON.parse(data)
    }

    public func create(_ object: KubeObject, fieldManager: String) async throws -> JSON? {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(.POST, type.collectionPath(namespace: object.namespace), query: ["fieldManager": fieldManager],
                                            body: Data(object.value.compactJSON()), contentType: "application/json")
        if status == 409 && Self.reason(data) == "AlreadyExists" { return nil }
        guard (200..<300).contains(status) else { throw apiError(status, data, object: object.reference, verb: "create") }
        return try JSON.parse(data)
    }

    public func update(_ object: KubeObject, resourceVersion: String, fieldManager: String) async throws -> Bool {
        let type = try ResourceType.of(object)
        let (status, data) = try await send(.PUT, type.path(name: object.name, namespace: object.namespace), query: ["fieldManager": fieldManager],
                                            body: Data(object.value(resourceVersion: resourceVersion).compactJSON()), contentType: "application/json")
        if status == 409 { return false }
        guard (200..<300).contains(status) else { throw apiError(status, data, object: object.reference, verb: "update") }
        return true
    }

    public func get(_ type: ResourceType, name: String, namespace: String?) async throws -> JSON? {
        let (status, data) = try await send(.GET, type.path(name: name, namespace: namespace))
        if status == 404 { try requireKubernetes(data, path: type.path(name: name, namespace: namespace)); return nil }
        guard (200..<300).contains(status) else { throw apiError(status, data, object: ref(type, name, namespace), verb: "get") }
        return try JSON.parse(data)
    }

    public func list(_ type: ResourceType, namespace: String?, labelSelector: String?) async throws -> [JSON] {
        var items: [JSON] = []
        var token: String?
        repeat {
            var query = ["limit": "500"]
            if let labelSelector { query["labelSelector"] = labelSelector }
            if let token { query["continue"] = token }
            let (status, data) = try await send(.GET, type.collectionPath(namespace: namespace), query: query)
            if status == 404 && namespace != nil { try requireKubernetes(data, path: type.collectionPath(namespace: namespace)); return [] }
            guard (200..<300).contains(status) else { throw apiError(status, data, object: "\(type.plural)\(namespace.map { " in \($0)" } ?? "")", verb: "list") }
            let page = try JSON.parse(data)
            items += page["items"]?.array ?? []
            token = page.at("metadata", "continue")?.string
            if token?.isEmpty == true { token = nil }
        } while token != nil
        return items
    }

    public func patch(_ type: ResourceType, name: String, namespace: String?, mergePatch: Data) async throws -> JSON {
        let (status, data) = try await send(.PATCH, type.path(name: name, namespace: namespace), body: mergePatch, contentType: "application/merge-patch+json")
        guard (200..<300).contains(status) else { throw apiError(status, data, object: ref(type, name, namespace), verb: "patch") }
        return try JSON.parse(data)
    }

    public func delete(_ type: ResourceType, name: String, namespace: String?, propagation: DeletePropagation) async throws -> Bool {
        let body = Data("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"\(propagation.rawValue)\"}".utf8)
        let (status, data) = try await send(.DELETE, type.path(name: name, namespace: namespace), body: body, contentType: "application/json")
        if status == 404 { try requireKubernetes(data, path: type.path(name: name, namespace: namespace)); return false }
        guard (200..<300).contains(status) else { throw apiError(status, data, object: ref(type, name, namespace), verb: "delete") }
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
                    var request = try await makeRequest(.GET, "/api/v1/namespaces/\(namespace)/pods/\(pod)/log", query: query)
                    request.headers.add(name: "Accept", value: "*/*")
                    let response = try await client.execute(request, timeout: .hours(24), logger: logger)
                    guard response.status.code < 300 else {
                        let data = try await response.body.collect(upTo: 1 << 20)
                        throw apiError(Int(response.status.code), Data(data.readableBytesView), object: "Pod \(namespace)/\(pod)", verb: "read logs of")
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

    // MARK: Transport

    func ref(_ type: ResourceType, _ name: String, _ namespace: String?) -> String {
        namespace.map { "\(type.kind) \($0)/\(name)" } ?? "\(type.kind) \(name)"
    }

    func makeRequest(_ method: HTTPMethod, _ path: String, query: [String: String] = [:]) async throws -> HTTPClientRequest {
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
        if let tokenFile = connection.tokenFile, let token = try? String(contentsOfFile: tokenFile, encoding: .utf8) {
            request.headers.add(name: "Authorization", value: "Bearer \(token.trimmedWhitespace)")
        } else if let token = connection.token {
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
        }
        return request
    }

    /// A 404 from a Kubernetes API server carries a `Status` object; anything else (a web server, a proxy's
    /// page) means the kubeconfig points at something that is not one, which must not read as "not found".
    func requireKubernetes(_ data: Data, path: String) throws {
        if (try? JSON.parse(data))?["kind"]?.string == "Status" { return }
        throw SoError("\(base) (context \(connection.contextName)) is not a Kubernetes API server: GET \(path) answered 404 without a Kubernetes Status",
                      hint: "check the kubeconfig's server address ('kubectl cluster-info' with the same kubeconfig and context)", exitCode: SoError.exitUnreachable)
    }

    /// One request with retries on 429, 5xx and connection failures.
    func send(_ method: HTTPMethod, _ path: String, query: [String: String] = [:], body: Data? = nil, contentType: String? = nil) async throws -> (Int, Data) {
        var attempt = 0
        var delay = 0.2
        let first = DispatchTime.now().uptimeNanoseconds
        while true {
            attempt += 1
            var request = try await makeRequest(method, path, query: query)
            if let body {
                request.body = .bytes(ByteBuffer(bytes: body))
                if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            }
            do {
                let began = DispatchTime.now().uptimeNanoseconds
                let response = try await client.execute(request, timeout: .seconds(120), logger: logger)
                let buffer = try await response.body.collect(upTo: 64 << 20)
                let status = Int(response.status.code)
                logger.debug("\(method.rawValue) \(path) \(status) \((DispatchTime.now().uptimeNanoseconds - began) / 1_000_000)ms")
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
                throw SoError("cannot reach the API server \(base) (context \(connection.contextName)): \(Self.describe(error))",
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
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: return .timedOut
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
        case .tls: return "TLS handshake failed (\(String(describing: error).replacingOccurrences(of: "\n", with: " ").prefix(160)))"
        case .other: return String(String(describing: error).replacingOccurrences(of: "\n", with: " ").lowercased().prefix(200))
        }
    }

    static func hint(for error: Error) -> String {
        if failure(error) == .tls {
            return "the server's certificate does not match the kubeconfig's CA or server name; check certificate-authority-data and server"
        }
        return "is the cluster running? check 'kubectl cluster-info' with the same kubeconfig and context"
    }

    /// The `reason` of a Kubernetes `Status` body (`AlreadyExists`, `Conflict` …).
    static func reason(_ data: Data) -> String? { (try? JSON.parse(data))?["reason"]?.string }

    /// A Kubernetes `Status` body as one line naming the object.
    func apiError(_ status: Int, _ data: Data, object: String, verb: String) -> SoError {
        let json = try? JSON.parse(data)
        let message = json?["message"]?.string ?? String(decoding: data.prefix(300), as: UTF8.self)
        let reason = json?["reason"]?.string ?? "HTTP \(status)"
        let hint: String
        switch status {
        case 401: hint = "the kubeconfig's credentials were refused; refresh them"
        case 403: hint = "the kubeconfig's user may not do this; ask for RBAC rights or use another context"
        case 404: hint = "the object or its namespace does not exist"
        case 409: hint = "someone else changed it; run the command again"
        case 422: hint = "the object is invalid; 'so deployment render' shows what was sent"
        default: hint = "see 'kubectl get events' in the namespace"
        }
        return SoError("cannot \(verb) \(object): \(message.prefix(1).lowercased() + message.dropFirst()) (\(reason))", hint: hint)
    }
}
