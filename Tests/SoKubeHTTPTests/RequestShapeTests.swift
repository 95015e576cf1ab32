import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SoBasics
import SoKube
import SoKubeHTTP
import Testing

/// A loopback HTTP(S) server that records requests (and the client certificate presented) and answers from a script.
final class RecordingServer: @unchecked Sendable {
    struct Request {
        var method: String
        var uri: String
        var headers: [(String, String)]
        var body: String
        /// The serial number of the client certificate, when the server asked for one.
        var clientCertificateSerial: [UInt8]? = nil
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }
    struct Response {
        var status: Int
        var headers: [(String, String)] = []
        var body: String
    }

    private let lock = NSLock()
    private var recorded: [Request] = []
    private var script: [Response] = []
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?

    var requests: [Request] { lock.withLock { recorded } }

    func answer(_ responses: Response...) { lock.withLock { script += responses } }

    fileprivate func handle(_ r: Request) -> Response {
        lock.withLock {
            recorded.append(r)
            return script.isEmpty
                ? Response(status: 500, body: "{\"kind\":\"Status\",\"message\":\"unexpected request\"}")
                : script.removeFirst()
        }
    }

    /// - Parameter tls: serve HTTPS with this configuration (HTTP/1.1).
    func start(tls: TLSConfiguration? = nil) throws -> Int {
        let context = try tls.map { try NIOSSLContext(configuration: $0) }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                if let context {
                    do {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    } catch {
                        return channel.eventLoop.makeFailedFuture(error)
                    }
                }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(server: self))
                }
            }
        let ch = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        channel = ch
        return ch.localAddress!.port!
    }

    func stop() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let server: RecordingServer
        var head: HTTPRequestHead?
        var body = ""
        init(server: RecordingServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let h):
                head = h
                body = ""
            case .body(let b): body += String(buffer: b)
            case .end:
                guard let h = head else { return }
                let serial = (try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self))?
                    .peerCertificate?.serialNumber
                let r = server.handle(
                    Request(
                        method: h.method.rawValue, uri: h.uri, headers: h.headers.map { ($0.name, $0.value) },
                        body: body,
                        clientCertificateSerial: serial))
                var headers = HTTPHeaders([
                    ("Content-Type", "application/json"), ("Content-Length", String(r.body.utf8.count)),
                ])
                for (k, v) in r.headers { headers.add(name: k, value: v) }
                context.write(
                    wrapOutboundOut(
                        .head(
                            HTTPResponseHead(
                                version: h.version, status: HTTPResponseStatus(statusCode: r.status), headers: headers))
                    ), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: r.body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

@Suite(.serialized) struct RequestShapeTests {
    func client(_ port: Int, token: String? = "t0ken") throws -> HTTPClusterClient {
        try HTTPClusterClient(ClusterConnection(contextName: "test", server: "http://127.0.0.1:\(port)", token: token))
    }

    @Test func serverSideApplyShape() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(.init(status: 200, body: "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let object = KubeObject(
            apiVersion: "v1", kind: "ConfigMap", name: "c", namespace: "ns",
            body: [("data", .map([("k", .string("v"))]))])
        let stored = try await c.apply(object, fieldManager: "so", force: true)
        #expect(stored.name == "c")
        let r = try #require(s.requests.first)
        #expect(r.method == "PATCH")
        #expect(r.uri == "/api/v1/namespaces/ns/configmaps/c?fieldManager=so&force=true")
        #expect(r.header("Content-Type") == "application/apply-patch+yaml")
        #expect(r.header("Authorization") == "Bearer t0ken")
        #expect(r.body == object.json(pretty: false))
    }

    @Test func listFollowsContinueTokens() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(
                status: 200, body: "{\"metadata\":{\"continue\":\"next1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}}]}"
            ),
            .init(status: 200, body: "{\"metadata\":{\"continue\":\"\"},\"items\":[{\"metadata\":{\"name\":\"b\"}}]}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let items = try await c.list(
            try ResourceType.of(apiVersion: "apps/v1", kind: "Deployment"), namespace: "ns",
            labelSelector: "app=x,tier=web")
        #expect(items.map(\.name) == ["a", "b"])
        #expect(
            s.requests.map(\.uri) == [
                "/apis/apps/v1/namespaces/ns/deployments?labelSelector=app%3Dx,tier%3Dweb&limit=500",
                "/apis/apps/v1/namespaces/ns/deployments?continue=next1&labelSelector=app%3Dx,tier%3Dweb&limit=500",
            ])
    }

    /// A watch: asked for with the selector and a time limit; each changed or deleted object handed over, the
    /// objects the watch starts by naming (ADDED) passed over, and an ERROR event (a version too old) ends it.
    @Test func changesAreTheWatchsModifiedAndDeletedObjects() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        let events = [
            #"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#,
            #"{"type":"MODIFIED","object":{"metadata":{"name":"a"},"status":{"phase":"Running"}}}"#,
            #"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}"#,
            #"{"type":"DELETED","object":{"metadata":{"name":"b"}}}"#,
            #"{"type":"ERROR","object":{"kind":"Status","code":410}}"#,
            #"{"type":"MODIFIED","object":{"metadata":{"name":"after-the-error"}}}"#,
        ]
        s.answer(.init(status: 200, body: events.joined(separator: "\n") + "\n"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        var seen: [String] = []
        for try await object in c.changes(.pod, namespace: "ns", labelSelector: "app=x", seconds: 30) {
            seen.append(object.name + (object.at("status", "phase")?.string.map { " " + $0 } ?? ""))
        }
        #expect(seen == ["a Running", "b"])
        #expect(
            s.requests.map(\.uri) == ["/api/v1/namespaces/ns/pods?labelSelector=app%3Dx&timeoutSeconds=30&watch=true"])
    }

    /// A caller that keeps a summary gets the list a page at a time, as the pages arrive.
    @Test func forEachPageHandsOverEachPage() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(
                status: 200,
                body:
                    "{\"metadata\":{\"continue\":\"next1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}"
            ),
            .init(status: 200, body: "{\"metadata\":{\"continue\":\"\"},\"items\":[{\"metadata\":{\"name\":\"c\"}}]}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        var pages: [[String]] = []
        try await c.forEachPage(.deployment, namespace: nil, labelSelector: nil) { pages.append($0.map(\.name)) }
        #expect(pages == [["a", "b"], ["c"]])
        #expect(
            s.requests.map(\.uri) == [
                "/apis/apps/v1/deployments?limit=500", "/apis/apps/v1/deployments?continue=next1&limit=500",
            ])
    }

    /// The server's table (`so deployment list`): asked for as a Table without the objects, a page at a time,
    /// each row handed over as its cells by column name.
    @Test func forEachTablePageAsksForTheTableAndNamesTheCells() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        let columns = #""columnDefinitions":[{"name":"Name"},{"name":"Ready"},{"name":"Available"}]"#
        s.answer(
            .init(
                status: 200,
                body: #"{"kind":"Table","metadata":{"continue":"next1"},"# + columns
                    + #","rows":[{"cells":["a","1/1",1]},{"cells":["b","0/2",0]}]}"#),
            .init(
                status: 200,
                body: #"{"kind":"Table","metadata":{},"# + columns + #","rows":[{"cells":["c","1/1",1]}]}"#))
        let http = try client(port)
        defer { Task { await http.shutdown() } }
        let c: any ClusterClient = http
        var pages: [[[String: JSON]]] = []
        try await c.forEachTablePage(.deployment, namespace: nil, labelSelector: "managed=so") { pages.append($0) }
        #expect(pages.map { $0.map { $0["Name"]?.string ?? "" } } == [["a", "b"], ["c"]])
        #expect(pages.first?.last?["Ready"]?.string == "0/2" && pages.first?.last?["Available"]?.int == 0)
        #expect(
            s.requests.map(\.uri) == [
                "/apis/apps/v1/deployments?includeObject=None&labelSelector=managed%3Dso&limit=4000&resourceVersion=0",
                "/apis/apps/v1/deployments?continue=next1&includeObject=None&labelSelector=managed%3Dso&limit=4000",
            ])
        let accept = s.requests.first?.headers.filter { $0.0.lowercased() == "accept" }.map(\.1)
        #expect(accept == ["application/json;as=Table;v=v1;g=meta.k8s.io"])
    }

    /// The objects' metadata (the dashboard's count of the GitHub inbox by state): asked for as a
    /// PartialObjectMetadataList from the cache, a page at a time, each object's labels handed over.
    @Test func forEachLabelsPageAsksForMetadataOnly() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(
                status: 200,
                body: #"{"kind":"PartialObjectMetadataList","metadata":{"continue":"n1"},"items":["#
                    + #"{"metadata":{"name":"a","labels":{"state":"done","n":"1"}}},{"metadata":{"name":"b"}}]}"#),
            .init(
                status: 200,
                body: #"{"kind":"PartialObjectMetadataList","metadata":{},"items":["#
                    + #"{"metadata":{"name":"c","labels":{"state":"pending"}}}]}"#))
        let http = try client(port)
        defer { Task { await http.shutdown() } }
        let c: any ClusterClient = http
        var pages: [[[String: String]]] = []
        try await c.forEachLabelsPage(.secret, namespace: "so-github", labelSelector: "kind=event") { pages.append($0) }
        #expect(pages == [[["state": "done", "n": "1"], [:]], [["state": "pending"]]])
        #expect(
            s.requests.map(\.uri) == [
                "/api/v1/namespaces/so-github/secrets?labelSelector=kind%3Devent&limit=4000&resourceVersion=0",
                "/api/v1/namespaces/so-github/secrets?continue=n1&labelSelector=kind%3Devent&limit=4000",
            ])
        let accept = s.requests.first?.headers.filter { $0.0.lowercased() == "accept" }.map(\.1)
        #expect(accept == ["application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"])
    }

    /// Through the protocol (as `so deployment list` calls it), the live client hands over each page read to
    /// the shape asked: the objects keep what it names, and the rest of their bytes is never built.
    @Test func forEachPageThroughTheProtocolReadsToTheShape() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(
                status: 200,
                body:
                    #"{"metadata":{"continue":"next1"},"items":[{"metadata":{"name":"a","managedFields":[{"x":"}"}]},"#
                    + #""spec":{"replicas":2,"template":{}}}]}"#),
            .init(status: 200, body: #"{"metadata":{"continue":""},"items":[{"metadata":{"name":"b"}}]}"#))
        let http = try client(port)
        defer { Task { await http.shutdown() } }
        let c: any ClusterClient = http
        var pages: [[JSON]] = []
        try await c.forEachPage(
            .deployment, namespace: nil, labelSelector: nil,
            keeping: .keys(["metadata": .keys(["name": .all]), "spec": .keys(["replicas": .all])])
        ) { pages.append($0) }
        #expect(pages.map { $0.map(\.name) } == [["a"], ["b"]])
        let a = try #require(pages.first?.first)
        #expect(a.at("metadata", "managedFields") == nil && a.at("spec", "template") == nil)
        #expect(a.at("spec", "replicas")?.int == 2)
    }

    @Test func notFoundIsNilAndDeleteCarriesPropagation() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(status: 404, body: "{\"kind\":\"Status\",\"reason\":\"NotFound\"}"), .init(status: 200, body: "{}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let type = try ResourceType.of(apiVersion: "batch/v1", kind: "Job")
        #expect(try await c.get(type, name: "j", namespace: "ns") == nil)
        #expect(try await c.delete(type, name: "j", namespace: "ns", propagation: .background))
        #expect(s.requests[1].method == "DELETE" && s.requests[1].body.contains("\"propagationPolicy\":\"Background\""))
    }

    @Test func createPostsAndAlreadyExistsIsNil() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(status: 201, body: "{\"metadata\":{\"name\":\"l\",\"resourceVersion\":\"7\"}}"),
            .init(
                status: 409,
                body:
                    "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"message\":\"leases \\\"l\\\" already exists\"}"
            ),
            .init(
                status: 409,
                body: "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"message\":\"operation cannot be fulfilled\"}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let lease = KubeObject(
            apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "l", namespace: "ns",
            body: [("spec", .map([("holderIdentity", .string("me"))]))])
        #expect(try await c.create(lease, fieldManager: "so")?.at("metadata", "resourceVersion")?.string == "7")
        #expect(try await c.create(lease, fieldManager: "so") == nil)
        // Any other 409 is an error, not "exists".
        await #expect { _ = try await c.create(lease, fieldManager: "so") } throws: { e in
            ((e as? SoError)?.message ?? "").hasPrefix(
                "cannot create Lease ns/l: operation cannot be fulfilled (Conflict)")
        }
        let r = s.requests[0]
        #expect(r.method == "POST")
        #expect(r.uri == "/apis/coordination.k8s.io/v1/namespaces/ns/leases?fieldManager=so")
        #expect(r.header("Content-Type") == "application/json")
        #expect(r.body == lease.json(pretty: false))
    }

    @Test func updateIsACompareAndSwapOnResourceVersion() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(status: 200, body: "{\"metadata\":{\"name\":\"l\"}}"),
            .init(
                status: 409,
                body: "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"message\":\"the object has been modified\"}"))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let lease = KubeObject(
            apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "l", namespace: "ns",
            body: [("spec", .map([("holderIdentity", .string("me"))]))])
        #expect(try await c.update(lease, resourceVersion: "41", fieldManager: "so") != nil)
        #expect(try await c.update(lease, resourceVersion: "41", fieldManager: "so") == nil)
        let r = s.requests[0]
        #expect(r.method == "PUT")
        #expect(r.uri == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l?fieldManager=so")
        let sent = try JSON.parse(Data(r.body.utf8))
        #expect(sent.at("metadata", "resourceVersion")?.string == "41")
        #expect(sent.at("spec", "holderIdentity")?.string == "me")
    }

    @Test func aDeleteWithAPreconditionSendsTheResourceVersionAndAConflictIsFalse() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(status: 200, body: "{\"kind\":\"Status\",\"status\":\"Success\"}"),
            .init(
                status: 409,
                body:
                    "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"message\":\"Precondition failed: UID in precondition\"}"
            ))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        let lease = try ResourceType.of(apiVersion: "coordination.k8s.io/v1", kind: "Lease")
        #expect(try await c.delete(lease, name: "l", namespace: "ns", resourceVersion: "41"))
        #expect(try await c.delete(lease, name: "l", namespace: "ns", resourceVersion: "41") == false)
        let r = s.requests[0]
        #expect(r.method == "DELETE")
        #expect(r.uri == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l")
        let sent = try JSON.parse(Data(r.body.utf8))
        #expect(sent.at("preconditions", "resourceVersion")?.string == "41")
    }

    @Test func statusErrorsBecomeOneLine() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(
                status: 422,
                body:
                    "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"message\":\"Deployment.apps \\\"d\\\" is invalid: spec.replicas: Invalid value: -1\"}"
            ))
        let c = try client(port)
        defer { Task { await c.shutdown() } }
        do {
            _ = try await c.apply(
                KubeObject(apiVersion: "apps/v1", kind: "Deployment", name: "d", namespace: "ns"), fieldManager: "so",
                force: true)
            Issue.record("expected an error")
        } catch let e as SoError {
            #expect(
                e.message
                    == "cannot apply Deployment ns/d: deployment.apps \"d\" is invalid: spec.replicas: Invalid value: -1 (Invalid)"
            )
            #expect(e.hint?.contains("render") == true)
        }
    }

    @Test func retriesOn429HonouringRetryAfterAnd5xx() async throws {
        let s = RecordingServer()
        let port = try s.start()
        defer { s.stop() }
        s.answer(
            .init(status: 429, headers: [("Retry-After", "0")], body: "{}"),
            .init(status: 503, body: "{}"),
            .init(status: 200, body: "{\"metadata\":{\"name\":\"ns\"}}"))
        let c = try client(port, token: nil)
        defer { Task { await c.shutdown() } }
        let ns = try await c.get(try ResourceType.of(apiVersion: "v1", kind: "Namespace"), name: "ns", namespace: nil)
        #expect(ns?.name == "ns")
        #expect(s.requests.count == 3)
        #expect(s.requests.allSatisfy { $0.header("Authorization") == nil })
    }
}
