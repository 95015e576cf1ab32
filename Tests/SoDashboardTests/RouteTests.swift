import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoActions
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDashboardServer
@testable import SoDeploy

/// The server's routes over the fake cluster: the sign-in, the session's cookie, the headers, the CSRF token,
/// fragments.
@Suite struct RouteTests {
    static let token = String(repeating: "ab", count: 32)
    static let session = String(repeating: "5e", count: 32)
    static let cookie = "so-dashboard-7878=\(session)"

    func app(
        readOnly: Bool = false, transport: DashboardAccess.Transport = .http, allowedHosts: Set<String>? = nil,
        httpsOnly: Bool = false,
        clock: Box<Date> = Box(DashboardFixture.now),
        prepare: (FakeCluster, inout SoContext) throws -> Void = { _, _ in }
    ) async throws -> (some ApplicationProtocol, DashboardFeed) {
        let c = try DashboardFixture.cluster()
        var ctx = DashboardFixture.context(c)
        try prepare(c, &ctx)
        let feed = DashboardFeed(ctx: ctx, client: c, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        let minted = Box(0)
        var access = DashboardAccess(
            token: Self.token, csrf: "CSRF-TOKEN", port: 7878, transport: transport, allowedHosts: allowedHosts,
            now: { clock.value },
            mint: {
                minted.value += 1
                return minted.value == 1 ? Self.session : String(repeating: "0\(minted.value % 10)", count: 32)
            })
        access.httpsOnly = httpsOnly
        let server = DashboardServer(
            feed: feed, access: access,
            actions: readOnly ? nil : DashboardActions(ctx: ctx, cluster: ClusterOptions()), hostName: "testhost")
        return (Application(router: server.router()), feed)
    }

    /// Signs in with the token as the sign-in page's form does; the session's cookie.
    static func signIn(_ client: some TestClientProtocol, headers: HTTPFields = [:]) async throws -> String {
        var h = headers
        h[.contentType] = "application/x-www-form-urlencoded"
        return try await client.execute(
            uri: "/signin", method: .post, headers: h, body: ByteBuffer(string: "token=\(token)")
        ) { r in
            #expect(r.status == .seeOther && r.headers[.location] == "/", "\(r.status)")
            return r.headers[.setCookie] ?? ""
        }
    }

    @Test func withoutASessionEverythingIsA403AndNothingElse() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            for (uri, headers) in [
                ("/", HTTPFields()), ("/?token=\(Self.token)", [:]), ("/?token=", [:]), ("/d/fix-login", [:]),
                ("/static/app.js", [:]), ("/", [.cookie: "so-dashboard-7878=\(Self.token)"]),
                ("/", [.cookie: "so-dashboard-7878=\(String(repeating: "cd", count: 32))"]),
                ("/", [.cookie: "so-dashboard-9999=\(Self.session)"]), ("/events", [:]),
            ] {
                try await client.execute(uri: uri, method: .get, headers: headers) { r in
                    #expect(r.status == .forbidden && String(buffer: r.body) == "forbidden\n", "\(uri)")
                    #expect(r.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                    #expect(r.headers[.setCookie] == nil, "a token in the address opens nothing: \(uri)")
                }
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func theTokenOpensASessionWhoseCookieIsNotTheTokenAndEnds() async throws {
        let clock = Box(DashboardFixture.now)
        let (app, _) = try await app(clock: clock)
        try await app.test(.router) { client in
            let set = try await Self.signIn(client)
            #expect(set == "\(Self.cookie); Path=/; Max-Age=43200; HttpOnly; SameSite=Strict", "\(set)")
            #expect(!set.contains(Self.token))
            try await client.execute(uri: "/", method: .get, headers: [.cookie: "a=b; \(Self.cookie)"]) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "text/html; charset=utf-8")
                #expect(r.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
                let body = String(buffer: r.body)
                #expect(body.contains("<!doctype html>") && body.contains("action=\"/signout\""))
            }
            try await client.execute(uri: "/?fragment=1", method: .get, headers: [.cookie: Self.cookie]) { r in
                let body = String(buffer: r.body)
                #expect(body.hasPrefix("<div class=\"cards\"") && !body.contains("<html"), "\(body)")
            }
            for bad in ["/d/NOT_A_NAME", "/d/..%2Fetc", "/d/absent"] {
                try await client.execute(uri: bad, method: .get, headers: [.cookie: Self.cookie]) { r in
                    #expect(r.status == .notFound, "\(bad)")
                }
            }
            // Twelve hours on, the session has ended on the server too (a cookie kept longer opens nothing).
            clock.value = DashboardFixture.now.addingTimeInterval(43_200)
            try await client.execute(uri: "/", method: .get, headers: [.cookie: Self.cookie]) {
                #expect($0.status == .forbidden)
            }
        }
    }

    @Test func signingOutEndsTheSession() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            try await client.execute(uri: "/signout", method: .post, headers: [.cookie: Self.cookie]) { r in
                #expect(r.status == .seeOther && r.headers[.location] == "/signin")
                #expect(r.headers[.setCookie] == "so-dashboard-7878=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
            }
            try await client.execute(uri: "/", method: .get, headers: [.cookie: Self.cookie]) {
                #expect($0.status == .forbidden)
            }
        }
    }

    @Test func theSignInPageTakesTheTokenFromTheFragmentWithAScriptFile() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/signin", method: .get) { r in
                let page = String(buffer: r.body)
                #expect(r.status == .ok && page.contains("<script src=\"/static/signin.js\" defer></script>"))
                #expect(!page.contains("<script>"), "no inline script: the policy would refuse it")
                #expect(r.headers[.contentSecurityPolicy]?.contains("script-src 'self';") == true)
            }
            try await client.execute(uri: "/static/signin.js", method: .get) { r in
                let js = String(buffer: r.body)
                #expect(r.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(js.contains("location.hash") && js.contains("history.replaceState"), "\(js)")
                #expect(js.contains("addEventListener('hashchange', signIn)"), "a next link on this page signs in")
            }
            // A wrong token gets the page again, saying so (with its script: the next link is a fragment change).
            try await client.execute(
                uri: "/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=wrong")
            ) { r in
                let page = String(buffer: r.body)
                #expect(
                    r.status == .forbidden && page.contains("forbidden: that is not this dashboard&#39;s token"),
                    "\(page)")
                #expect(page.contains("<script src=\"/static/signin.js\" defer></script>") && !page.contains("wrong"))
            }
        }
    }

    @Test func wrongTokensSlowTheirClientDown() async throws {
        let clock = Box(DashboardFixture.now)
        let (app, _) = try await app(transport: .proxied, clock: clock)
        try await app.test(.router) { client in
            func tryToken(_ token: String, from: String) async throws -> (HTTPResponse.Status, String?) {
                try await client.execute(
                    uri: "/signin", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded", HeaderNames.forwardedFor: from],
                    body: ByteBuffer(string: "token=\(token)")
                ) { ($0.status, $0.headers[HeaderNames.retryAfter]) }
            }
            for _ in 0..<Throttle.free {
                #expect(try await tryToken("wrong", from: "10.0.0.9").0 == .forbidden)
            }
            // Now it waits a second, then two, …: even the right token is not looked at meanwhile.
            let waiting = try await tryToken(Self.token, from: "10.0.0.9")
            #expect(waiting.0 == .tooManyRequests && waiting.1 == "1", "\(waiting)")
            clock.value += 1
            #expect(try await tryToken("wrong", from: "10.0.0.9").0 == .forbidden, "the first past the free ones")
            #expect(try await tryToken(Self.token, from: "10.0.0.9") == (.tooManyRequests, "2"))
            // Another client is not slowed by this one.
            #expect(try await tryToken(Self.token, from: "10.0.0.7").0 == .seeOther)
            clock.value += 2
            #expect(try await tryToken(Self.token, from: "10.0.0.9").0 == .seeOther)
        }
    }

    /// An acting page behind a proxy that serves HTTPS: what the proxy says came over plain HTTP gets nothing (the
    /// token, the cookie and the actions never cross a network in the clear), the health probe aside.
    @Test func anActingPageBehindAProxyAnswersHTTPSOnly() async throws {
        let (app, _) = try await app(transport: .proxied, httpsOnly: true)
        try await app.test(.router) { client in
            let plain: HTTPFields = [HeaderNames.forwardedProto: "http"]
            for (uri, method) in [
                ("/signin", HTTPRequest.Method.get), ("/signin", .post), ("/", .get), ("/actions", .post),
            ] {
                let (status, body) = try await client.execute(uri: uri, method: method, headers: plain) {
                    ($0.status, String(buffer: $0.body))
                }
                #expect(status == .forbidden && body.contains("answers over HTTPS only"), "\(method) \(uri)")
            }
            // No header is no proof of HTTPS either.
            #expect(try await client.execute(uri: "/signin", method: .get) { $0.status } == .forbidden)
            #expect(try await client.execute(uri: "/healthz", method: .get, headers: plain) { $0.status } == .ok)
            let https: HTTPFields = [HeaderNames.forwardedProto: "https"]
            _ = try await Self.signIn(client, headers: https)
            var headers = https
            headers[.cookie] = "so-dashboard-7878=\(Self.session)"
            #expect(try await client.execute(uri: "/", method: .get, headers: headers) { $0.status } == .ok)
        }
    }

    @Test func everyResponseIsHardenedErrorsIncluded() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            let big = ByteBuffer(string: "csrf=CSRF-TOKEN&text=" + String(repeating: "x", count: 70_000))
            for (uri, method, body, status) in [
                ("/no-such-page", HTTPRequest.Method.get, ByteBuffer(), HTTPResponse.Status.notFound),
                ("/actions", .post, big, .contentTooLarge), ("/signin", .post, ByteBuffer(), .forbidden),
                ("/d/absent", .get, ByteBuffer(), .notFound), ("/healthz", .get, ByteBuffer(), .ok),
            ] {
                try await client.execute(uri: uri, method: method, headers: [.cookie: Self.cookie], body: body) { r in
                    #expect(r.status == status, "\(uri)")
                    for (name, value) in DashboardAccess.securityHeaders {
                        #expect(r.headers[name] == value, "\(uri) \(r.status): \(name)")
                    }
                    #expect(r.headers[HeaderNames.strictTransportSecurity] == nil, "no HSTS over plain HTTP")
                }
            }
        }
    }

    @Test func overHTTPSTheCookieIsSecureAndResponsesCarryHSTS() async throws {
        for (transport, proto, secure) in [
            (DashboardAccess.Transport.https, nil, true), (.proxied, "https", true), (.proxied, "http", false),
            (.proxied, nil, false), (.http, "https", false),
        ] {
            let (app, _) = try await app(transport: transport)
            try await app.test(.router) { client in
                let headers: HTTPFields = proto.map { [HeaderNames.forwardedProto: $0] } ?? [:]
                let set = try await Self.signIn(client, headers: headers)
                #expect(set.hasSuffix("; Secure") == secure, "\(transport) \(proto ?? "-"): \(set)")
                try await client.execute(uri: "/nowhere", method: .get, headers: headers) { r in
                    #expect(
                        (r.headers[HeaderNames.strictTransportSecurity] == "max-age=31536000") == secure,
                        "\(transport) \(proto ?? "-")")
                }
            }
        }
    }

    @Test func onLoopbackOnlyItsOwnNamesAreAnswered() async throws {
        // The test client always says `Host: localhost`.
        let (refused, _) = try await app(allowedHosts: ["127.0.0.1"])
        try await refused.test(.router) { client in
            for uri in ["/healthz", "/signin", "/"] {
                try await client.execute(uri: uri, method: .get) { r in
                    #expect(r.status == .misdirectedRequest, "\(uri)")
                    #expect(r.headers[.contentSecurityPolicy] != nil)
                }
            }
        }
        let (answered, _) = try await app(allowedHosts: DashboardAccess.loopbackHosts("127.0.0.1"))
        try await answered.test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
        #expect(DashboardAccess.loopbackHosts("0.0.0.0") == nil)
        for (authority, name) in [
            ("127.0.0.1:7878", "127.0.0.1"), ("[::1]:7878", "::1"), ("LocalHost", "localhost"), (nil, ""),
            ("rebind.example.com:7878", "rebind.example.com"),
        ] {
            #expect(HardeningMiddleware<DashboardContext>.hostName(authority) == name)
        }
    }

    @Test func anotherOriginMayLinkHereButNotReadStreamOrPost() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            // A page on another port of 127.0.0.1 is the same site: the cookie goes with its requests.
            for (uri, mode, status) in [
                ("/", "navigate", HTTPResponse.Status.ok), ("/events", "cors", .forbidden),
                ("/events?ns=fix-login", "no-cors", .forbidden), ("/?fragment=1", "cors", .forbidden),
                ("/logs?ns=fix-login&container=agent", "cors", .forbidden),
            ] {
                try await client.execute(
                    uri: uri, method: .get,
                    headers: [.cookie: Self.cookie, HeaderNames.fetchSite: "same-site", HeaderNames.fetchMode: mode]
                ) { #expect($0.status == status, "\(uri) \(mode)") }
            }
            for path in ["/actions", "/signout"] {
                try await client.execute(
                    uri: path, method: .post,
                    headers: [
                        .cookie: Self.cookie, HeaderNames.fetchSite: "same-site", HeaderNames.fetchMode: "navigate",
                        .contentType: "application/x-www-form-urlencoded",
                    ], body: ByteBuffer(string: "action=stop&namespace=fix-login&csrf=CSRF-TOKEN")
                ) { #expect($0.status == .forbidden, "\(path)") }
            }
        }
    }

    @Test func backGoesOnlyToThisServersPages() {
        for (given, want) in [
            ("/", "/"), ("/cost", "/cost"), ("/d/fix-login", "/d/fix-login"),
            ("/d/fix-login?task=3", "/d/fix-login?task=3"),
            ("/%09/evil.com", "/"), ("//evil.com", "/"), ("/\\evil.com", "/"), ("https://evil.com", "/"),
            ("/d/fix-login?task=3&next=//evil.com", "/d/fix-login"), ("/d/fix-login?task=//evil", "/d/fix-login"),
            ("/d/../../evil", "/"), ("/\t/evil.com", "/"), ("", "/"), ("/d/fix-login/../x", "/"),
        ] {
            #expect(DashboardServer.back(given) == want, "\(given)")
        }
        #expect(DashboardServer.back(nil) == "/")
    }

    @Test func anActionNeedsTheCSRFTokenAndThisOrigin() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            let form = "action=cancel&namespace=fix-login&id=3"
            var headers: HTTPFields = [.cookie: Self.cookie, .contentType: "application/x-www-form-urlencoded"]
            for body in [form, form + "&csrf=WRONG", form + "&csrf="] {
                try await client.execute(
                    uri: "/actions", method: .post, headers: headers, body: ByteBuffer(string: body)
                ) {
                    #expect($0.status == .forbidden, "\(body)")
                }
            }
            headers[HeaderNames.fetchSite] = "cross-site"
            try await client.execute(
                uri: "/actions", method: .post, headers: headers, body: ByteBuffer(string: form + "&csrf=CSRF-TOKEN")
            ) { #expect($0.status == .forbidden) }
            headers[HeaderNames.fetchSite] = "same-origin"
            headers[.accept] = "application/json"
            // A namespace the cluster does not hold: refused by the action, said as JSON.
            try await client.execute(
                uri: "/actions", method: .post, headers: headers,
                body: ByteBuffer(string: "action=stop&namespace=absent&csrf=CSRF-TOKEN")
            ) { r in
                #expect(r.status == .unprocessableContent)
                #expect(String(buffer: r.body) == #"{"ok":false,"message":"no such deployment on this cluster"}"#)
            }
            // The web app's directory is not on this disk: acted on only through the cluster's record, and this
            // test's context reaches no cluster; its annotated directory is never read.
            try await client.execute(
                uri: "/actions", method: .post, headers: headers,
                body: ByteBuffer(string: "action=down&namespace=web&csrf=CSRF-TOKEN")
            ) { r in
                #expect(
                    String(buffer: r.body).contains("is gone, and no cluster to read its record from"),
                    "\(String(buffer: r.body))")
            }
        }
    }

    /// Namespaces whose annotations someone else wrote: a directory planted elsewhere, one under
    /// `$SO_HOME/deployments` whose deployment is another namespace: neither is acted on nor offered. A host left
    /// empty is acted on only through the cluster's record (`RecordActionTests`), which names no directory here.
    @Test func anActionActsOnlyOnWhatThisSoMade() async throws {
        let (app, _) = try await app { c, ctx in
            ctx.fs = try Self.ownedFiles()
            try Self.plant(c)
        }
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            let headers: HTTPFields = [
                .cookie: Self.cookie, .contentType: "application/x-www-form-urlencoded", .accept: "application/json",
            ]
            for (ns, said) in [
                ("planted", "planted's directory /tmp/planted is not under /home/u/.so/deployments"),
                ("borrowed", "/home/u/.so/deployments/fix-login is not the deployment of namespace borrowed"),
                ("hostless", "hostless's namespace names no host, and no cluster to read its record from"),
            ] {
                try await client.execute(
                    uri: "/actions", method: .post, headers: headers,
                    body: ByteBuffer(string: "action=start&namespace=\(ns)&csrf=CSRF-TOKEN")
                ) { r in
                    let body = String(buffer: r.body)
                    #expect(r.status == .unprocessableContent && body.contains(said), "\(ns): \(body)")
                }
                try await client.execute(uri: "/d/\(ns)", method: .get, headers: [.cookie: Self.cookie]) { r in
                    // A directory here that this so did not make is never offered; one elsewhere is, through its record.
                    #expect(
                        r.status == .ok && String(buffer: r.body).contains("value=\"start\"") == (ns == "hostless"),
                        "\(ns): start offered only for the hostless one")
                }
            }
        }
    }

    @Test func aReadOnlyDashboardTakesNoAction() async throws {
        let (app, _) = try await app(readOnly: true)
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            try await client.execute(
                uri: "/actions", method: .post, headers: [.cookie: Self.cookie],
                body: ByteBuffer(string: "action=stop&namespace=web&csrf=CSRF-TOKEN")
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/d/fix-login", method: .get, headers: [.cookie: Self.cookie]) { r in
                #expect(!String(buffer: r.body).contains("action=\"/actions\""))
            }
        }
    }

    @Test func theScriptAndStyleAreServedFromTheBinary() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            _ = try await Self.signIn(client)
            try await client.execute(uri: "/static/app.js", method: .get, headers: [.cookie: Self.cookie]) { r in
                #expect(r.headers[.contentType] == "text/javascript; charset=utf-8")
                let js = String(buffer: r.body)
                #expect(
                    js.contains("EventSource") && !js.contains("innerHTML = e.data"), "only server HTML is swapped in")
            }
            try await client.execute(uri: "/static/app.css", method: .get, headers: [.cookie: Self.cookie]) { r in
                #expect(r.headers[.contentType] == "text/css; charset=utf-8")
            }
        }
    }
}

extension RouteTests {
    /// This so's own workspace `fix-login` under `$SO_HOME/deployments`, and a directory planted elsewhere.
    static func ownedFiles() throws -> MemoryFileSystem {
        let fs = MemoryFileSystem(homeDirectory: "/home/u")
        let own = "/home/u/.so/deployments/fix-login"
        try fs.writeText("cluster-id: x\ndeployment-id: laconic-aaa\n", to: "\(own)/deployment.yml")
        try fs.writeText("stack: x\ndeploy-to: k8s-kind\nnamespace: fix-login\n", to: "\(own)/spec.yml")
        try fs.writeText("cluster-id: x\ndeployment-id: laconic-ppp\n", to: "/tmp/planted/deployment.yml")
        return fs
    }

    /// Namespaces whose annotations someone else wrote: one naming the planted directory, one naming this so's
    /// directory of another namespace, one naming no host.
    static func plant(_ c: FakeCluster) throws {
        try c.seed(DashboardFixture.namespace("planted", id: "laconic-ppp", dir: "/tmp/planted"))
        try c.seed(DashboardFixture.namespace("borrowed", id: "laconic-qqq", dir: "/home/u/.so/deployments/fix-login"))
        try c.seed(
            DashboardFixture.namespace(
                "hostless", id: "laconic-rrr", dir: "/home/u/.so/deployments/fix-login", host: ""))
    }
}

extension RouteTests {
    @Test func anAddressItCannotListenOnIsNamedWithWhatToChange() {
        struct Taken: Error, CustomStringConvertible { var description: String { "bind: Address already in use" } }
        let e = DashboardServer.cannotListen(host: "127.0.0.1", port: 7878, Taken())
        #expect(e.message == "so dashboard cannot listen on 127.0.0.1:7878: bind: Address already in use")
        #expect(e.hint?.contains("--port 0") == true)
    }
}
