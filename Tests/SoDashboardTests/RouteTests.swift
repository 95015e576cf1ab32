import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDashboardServer
@testable import SoDeploy

/// The server's routes over the fake cluster: the token, the cookie, the headers, the CSRF token, fragments.
@Suite struct RouteTests {
    static let token = String(repeating: "ab", count: 32)
    static let cookie = "so-dashboard-7878=\(token)"

    func app(readOnly: Bool = false) async throws -> (some ApplicationProtocol, DashboardFeed) {
        let c = try DashboardFixture.cluster()
        let ctx = DashboardFixture.context(c)
        let feed = DashboardFeed(ctx: ctx, client: c, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        let server = DashboardServer(
            feed: feed, access: DashboardAccess(token: Self.token, csrf: "CSRF-TOKEN", port: 7878),
            actions: readOnly ? nil : DashboardActions(ctx: ctx, cluster: ClusterOptions()), hostName: "testhost")
        return (Application(router: server.router()), feed)
    }

    @Test func withoutTheTokenEverythingIsA403AndNothingElse() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            for (uri, headers) in [
                ("/", HTTPFields()), ("/?token=wrong", [:]), ("/?token=", [:]), ("/d/fix-login", [:]),
                ("/static/app.js", [:]), ("/", [.cookie: "so-dashboard-7878=\(String(repeating: "cd", count: 32))"]),
                ("/", [.cookie: "so-dashboard-9999=\(Self.token)"]),
            ] {
                try await client.execute(uri: uri, method: .get, headers: headers) { r in
                    #expect(r.status == .forbidden && String(buffer: r.body) == "forbidden\n", "\(uri)")
                    #expect(r.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                }
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func theTokenBecomesACookieAndLeavesTheAddress() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/d/fix-login?task=3&token=\(Self.token)", method: .get) { r in
                #expect(r.status == .seeOther)
                #expect(r.headers[.location] == "/d/fix-login?task=3")
                #expect(r.headers[.setCookie] == "\(Self.cookie); Path=/; HttpOnly; SameSite=Strict")
            }
            try await client.execute(uri: "/", method: .get, headers: [.cookie: "a=b; \(Self.cookie)"]) { r in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "text/html; charset=utf-8")
                #expect(r.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
                #expect(String(buffer: r.body).contains("<!doctype html>"))
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
        }
    }

    @Test func anActionNeedsTheCSRFTokenAndThisOrigin() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
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
            // The web app is not a workspace: `down` is refused for it.
            try await client.execute(
                uri: "/actions", method: .post, headers: headers,
                body: ByteBuffer(string: "action=down&namespace=web&csrf=CSRF-TOKEN")
            ) { r in
                #expect(String(buffer: r.body).contains("is not a workspace of this host"), "\(String(buffer: r.body))")
            }
        }
    }

    @Test func aReadOnlyDashboardTakesNoAction() async throws {
        let (app, _) = try await app(readOnly: true)
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/actions", method: .post, headers: [.cookie: Self.cookie],
                body: ByteBuffer(string: "action=stop&namespace=web&csrf=CSRF-TOKEN")
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/d/fix-login", method: .get, headers: [.cookie: Self.cookie]) { r in
                #expect(!String(buffer: r.body).contains("<form"))
            }
        }
    }

    @Test func theScriptAndStyleAreServedFromTheBinary() async throws {
        let (app, _) = try await app()
        try await app.test(.router) { client in
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
    @Test func anAddressItCannotListenOnIsNamedWithWhatToChange() {
        struct Taken: Error, CustomStringConvertible { var description: String { "bind: Address already in use" } }
        let e = DashboardServer.cannotListen(host: "127.0.0.1", port: 7878, Taken())
        #expect(e.message == "so dashboard cannot listen on 127.0.0.1:7878: bind: Address already in use")
        #expect(e.hint?.contains("--port 0") == true)
    }
}
