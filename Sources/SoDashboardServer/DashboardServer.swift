import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SoActions
import SoBasics
import SoDashboard
import SoDeploy

/// `so dashboard`'s server: the pages of `SoDashboard` over HTTP, behind the run's token, live through one
/// event stream per page that names each new version of the feed's snapshot.
public struct DashboardServer: Sendable {
    public let feed: DashboardFeed
    public let access: DashboardAccess
    /// Nil: read-only (no forms on the pages; a POST gets a 403).
    public let actions: DashboardActions?
    public let hostName: String
    /// Nil: no `/github/webhook` (a POST there gets the 403 of any request without a session).
    public let webhook: GitHubWebhook?
    /// Nil: no `/github` page (the loop is not configured here); its feed should read the loop's state otherwise.
    public let github: GitHubSetup?

    public init(
        feed: DashboardFeed, access: DashboardAccess, actions: DashboardActions?, hostName: String,
        webhook: GitHubWebhook? = nil, github: GitHubSetup? = nil
    ) {
        self.feed = feed
        self.access = access
        self.actions = actions
        self.hostName = hostName
        self.webhook = webhook
        self.github = github
    }

    func pageContext() -> PageContext {
        var p = PageContext(now: feed.ctx.clock.now(), csrf: access.csrf, actions: actions != nil, hostName: hostName)
        p.github = github
        let actions = actions
        p.owns = { [hostName] in actions?.owns($0, hostName: hostName) ?? false }
        return p
    }

    public func router() -> Router<DashboardContext> {
        let router = Router(context: DashboardContext.self)
        router.add(middleware: HardeningMiddleware(access: access))
        router.add(middleware: AccessMiddleware(access: access, webhook: webhook != nil))
        router.get("/healthz") { _, _ in Self.text("ok\n") }
        router.get("/signin") { _, _ in Self.html(SignInPage.page) }
        router.get("/static/signin.js") { _, _ in Self.body(SignInPage.script, type: "text/javascript; charset=utf-8") }
        router.post("/signin") { request, context in try await signIn(request, context) }
        router.post("/signout") { request, _ in await signOut(request) }
        router.get("/static/app.js") { _, _ in Self.body(Assets.script, type: "text/javascript; charset=utf-8") }
        router.get("/static/app.css") { _, _ in Self.body(Assets.style, type: "text/css; charset=utf-8") }
        router.get("/") { request, _ in
            let s = await feed.snapshot
            return Self.html(
                fragment(request) ? EverythingPage.live(s, pageContext()) : EverythingPage.page(s, pageContext()))
        }
        router.get("/cost") { request, _ in
            let s = await feed.snapshot
            return Self.html(fragment(request) ? CostPage.live(s, pageContext()) : CostPage.page(s, pageContext()))
        }
        router.get("/github") { request, _ in
            guard github != nil else { return Self.text("the GitHub loop is not configured here\n", status: .notFound) }
            let s = await feed.snapshot
            return Self.html(fragment(request) ? GitHubPage.live(s, pageContext()) : GitHubPage.page(s, pageContext()))
        }
        router.get("/d/:namespace") { request, context in try await deployment(request, context) }
        router.get("/events") { request, _ in await events(request) }
        router.get("/logs") { request, _ in await logs(request) }
        router.post("/actions") { request, _ in try await act(request) }
        if let webhook {
            router.post(RouterPath(GitHubWebhook.path)) { request, _ in
                let (response, outcome) = await webhook.receive(request)
                await feed.count(outcome)
                return response
            }
        }
        return router
    }

    func fragment(_ request: Request) -> Bool { request.uri.queryParameters.get("fragment") == "1" }

    func deployment(_ request: Request, _ context: DashboardContext) async throws -> Response {
        let s = await feed.snapshot
        guard let ns = context.parameters.get("namespace"), NameRules.isDNSLabel(ns), let l = s.listing(ns) else {
            return Self.text("no such deployment on this cluster\n", status: .notFound)
        }
        let task = request.uri.queryParameters.get("task").flatMap { Int($0) }
        var detail: DeploymentDetail?
        var s2 = s
        do {
            detail = try await feed.detail(l)
        } catch {
            s2.problem = "its details could not be read: \(error)"
        }
        let p = pageContext()
        return Self.html(
            fragment(request)
                ? DeploymentPage.live(s2, l, detail, task: task, p) : DeploymentPage.page(s2, l, detail, task: task, p))
    }

    /// The page's event stream: `version` events, the current one first; a namespace's page marks it open.
    func events(_ request: Request) async -> Response {
        let ns = request.uri.queryParameters.get("ns").flatMap { NameRules.isDNSLabel($0) ? $0 : nil }
        let github = github != nil && request.uri.queryParameters.get("github") == "1"
        let updates = await feed.updates()
        let feed = feed
        if let ns { await feed.watch(namespace: ns, true) }
        if github { await feed.watchGitHub(true) }
        let body = ResponseBody { writer in
            defer {
                if let ns { Task { await feed.watch(namespace: ns, false) } }
                if github { Task { await feed.watchGitHub(false) } }
            }
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            // A stream never ends by itself: a SIGTERM or SIGINT ends it, so the server's shutdown does not wait on it.
            for await version in updates.cancelOnGracefulShutdown() {
                try await writer.write(ByteBuffer(string: EventStream.frame(event: "version", data: String(version))))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: Self.streamHeaders, body: body)
    }

    /// A service's log as an event stream: one `line` event a line.
    func logs(_ request: Request) async -> Response {
        guard let ns = request.uri.queryParameters.get("ns"), NameRules.isDNSLabel(ns),
            let container = request.uri.queryParameters.get("container"), NameRules.isDNSLabel(container)
        else { return Self.text("no such log\n", status: .notFound) }
        let lines = await feed.followLog(namespace: ns, container: container)
        let body = ResponseBody { writer in
            do {
                // What the container printed is the event's data, whatever it holds (`EventStream`).
                for try await line in lines.cancelOnGracefulShutdown() {
                    try await writer.write(ByteBuffer(string: EventStream.frame(event: "line", data: line)))
                }
            } catch {
                let said = "(\("\(error)".replacingOccurrences(of: "\n", with: " ")))"
                try await writer.write(ByteBuffer(string: EventStream.frame(event: "line", data: said)))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: Self.streamHeaders, body: body)
    }

    /// A page's action: the form's CSRF token must be the run's, and the request this origin's.
    func act(_ request: Request) async throws -> Response {
        guard let actions, Self.sameOrigin(request) else { return DashboardAccess.forbidden() }
        let raw = try await request.body.collect(upTo: 64 * 1024)
        let form = HTMLQuery.form(String(buffer: raw))
        guard let csrf = form["csrf"], DashboardAccess.same(csrf, access.csrf) else {
            return DashboardAccess.forbidden()
        }
        let outcome = await actions.perform(form, snapshot: await feed.snapshot, page: pageContext())
        await feed.touch()
        feed.ctx.console.out("dashboard: \(form["action"] ?? "?") \(form["namespace"] ?? "?"): \(outcome.message)")
        if request.headers[.accept]?.contains("application/json") == true {
            // In that key order: what the page's script and scripts reading it see first is whether it worked.
            let json = JSONWriter.string(
                .map([("ok", .bool(outcome.ok)), ("message", .string(outcome.message))]), .compact)
            return Self.body(json, type: "application/json", status: outcome.ok ? .ok : .unprocessableContent)
        }
        return Response(status: .seeOther, headers: [.location: Self.back(form["back"])])
    }

    /// Where a form sends the browser back to: one of this server's pages (`/`, `/cost`, `/d/NAME`, with a task's
    /// number at most), else `/`; never another host (`//evil`, `/%09/evil`, `/\\evil`).
    static func back(_ given: String?) -> String {
        guard let given else { return "/" }
        let parts = given.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0])
        let page =
            path == "/" || path == "/cost"
            || (path.hasPrefix("/d/") && NameRules.isDNSLabel(String(path.dropFirst(3))))
        guard page else { return "/" }
        guard parts.count == 2 else { return path }
        let task = parts[1].hasPrefix("task=") ? parts[1].dropFirst(5) : ""
        return !task.isEmpty && task.count < 10 && task.allSatisfy({ $0.isASCII && $0.isNumber })
            ? "\(path)?task=\(task)" : path
    }

    static let streamHeaders: HTTPFields = [
        .contentType: "text/event-stream", .cacheControl: "no-store", HeaderNames.accelBuffering: "no",
    ]

    static func html(_ s: String) -> Response { body(s, type: "text/html; charset=utf-8") }
    static func text(_ s: String, status: HTTPResponse.Status = .ok) -> Response {
        body(s, type: "text/plain; charset=utf-8", status: status)
    }
    static func body(_ s: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: s)))
    }
}

extension DashboardServer {
    /// The server could not listen where it was told (or ended with an error): one line, with what to change.
    static func cannotListen(host: String, port: Int, _ error: Error) -> SoError {
        SoError(
            "so dashboard cannot listen on \(host):\(port): \("\(error)".replacingOccurrences(of: "\n", with: " "))",
            hint: "--port 0 takes any free port; --listen takes an address of this machine (default 127.0.0.1)")
    }

    /// A certificate chain and its private key, PEM files, for HTTPS served by the dashboard itself.
    public struct TLSFiles: Sendable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }

        /// The server's TLS configuration, or which file could not be read and why.
        func configuration() throws -> TLSConfiguration {
            let chain: [NIOSSLCertificate]
            do {
                chain = try NIOSSLCertificate.fromPEMFile(certificate)
            } catch {
                throw Self.unreadable("--tls-cert", certificate, error)
            }
            guard !chain.isEmpty else { throw Self.unreadable("--tls-cert", certificate, "no certificate in it") }
            let privateKey: NIOSSLPrivateKey
            do {
                privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
            } catch {
                throw Self.unreadable("--tls-key", key, error)
            }
            return TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        }

        static func unreadable(_ flag: String, _ path: String, _ why: Any) -> SoError {
            SoError(
                "so dashboard cannot use \(flag) \(path): \("\(why)".replacingOccurrences(of: "\n", with: " "))",
                hint: "--tls-cert takes a PEM certificate chain, --tls-key its PEM private key (PKCS#8, PKCS#1 or EC)")
        }
    }

    /// Serves on `host:port` (over HTTPS with `tls`) until SIGINT or SIGTERM, the feed reading meanwhile;
    /// `running` hears the port bound.
    public func run(host: String, port: Int, tls: TLSFiles? = nil, running: @escaping @Sendable (Int) -> Void)
        async throws
    {
        var logger = Logger(label: "so-dashboard")
        logger.logLevel = .warning
        let configuration = ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil)
        let bound: @Sendable (any Channel) async -> Void = { running($0.localAddress?.port ?? port) }
        let app =
            try tls.map {
                Application(
                    router: router(), server: try .tls(tlsConfiguration: $0.configuration()),
                    configuration: configuration, onServerRunning: bound, logger: logger)
            } ?? Application(router: router(), configuration: configuration, onServerRunning: bound, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await feed.run() }
            group.addTask {
                do { try await app.runService() } catch {
                    // Before it listens, the server's error is the address's (a name that does not resolve, a port taken).
                    throw Self.cannotListen(host: host, port: port, error)
                }
            }
            // The server ends on a signal (or fails to bind): the feed ends with it.
            try await group.next()
            group.cancelAll()
        }
    }
}
