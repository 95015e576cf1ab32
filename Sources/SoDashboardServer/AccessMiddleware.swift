import Foundation
import Hummingbird
import NIOCore
import SoDashboard

/// The sign-in, before every route but `/healthz`, `/signin` and its script: a valid session's cookie, or a 403.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = DashboardContext
    let access: DashboardAccess
    /// Whether GitHub's deliveries are taken (`GitHubWebhook`: no session, its own signature instead).
    var webhook = false

    static let open: Set<String> = ["/healthz", "/signin", "/static/signin.js", "/static/app.css"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if access.httpsOnly, request.uri.path != "/healthz", !access.isHTTPS(request) {
            return DashboardAccess.notHTTPS()
        }
        if Self.open.contains(request.uri.path) || (webhook && request.uri.path == GitHubWebhook.path) {
            return try await next(request, context)
        }
        guard let id = access.cookie(request), await access.sessions.valid(id, at: access.now()) else {
            return DashboardAccess.forbidden()
        }
        // Another origin (a page on another port of 127.0.0.1 shares the site, so the cookie goes with it) may
        // send a person here, but not read, stream or post.
        if !DashboardServer.sameOrigin(request),
            request.method != .get || request.headers[HeaderNames.fetchMode] != "navigate"
        {
            return DashboardAccess.forbidden()
        }
        return try await next(request, context)
    }
}

extension DashboardServer {
    /// `POST /signin`: the token (from the form, or from the link's fragment by the page's script) opens a
    /// session; a wrong one counts against its client, which waits longer after each once it has had a few.
    func signIn(_ request: Request, _ context: DashboardContext) async throws -> Response {
        guard Self.sameOrigin(request) else { return DashboardAccess.forbidden() }
        let client = access.client(request, peer: context.remoteAddress?.ipAddress)
        let now = access.now()
        if let wait = await access.throttle.wait(client, at: now) {
            var r = Self.text("too many wrong tokens: try again in \(wait) s\n", status: .tooManyRequests)
            r.headers[HeaderNames.retryAfter] = String(wait)
            return r
        }
        let form = HTMLQuery.form(String(buffer: try await request.body.collect(upTo: 4096)))
        guard let given = form["token"], DashboardAccess.same(given, access.token) else {
            await access.throttle.failed(client, at: now)
            var refused = Self.html(SignInPage.refused("forbidden: that is not this dashboard's token"))
            refused.status = .forbidden
            return refused
        }
        await access.throttle.succeeded(client)
        let id = await access.sessions.open(until: now.addingTimeInterval(Double(access.sessionSeconds)))
        return Response(status: .seeOther, headers: [.location: "/", .setCookie: access.setCookie(id, request)])
    }

    /// `POST /signout`: the session ends here and in the browser.
    func signOut(_ request: Request) async -> Response {
        guard Self.sameOrigin(request) else { return DashboardAccess.forbidden() }
        if let id = access.cookie(request) { await access.sessions.close(id) }
        return Response(
            status: .seeOther, headers: [.location: "/signin", .setCookie: access.setCookie(nil, request)])
    }

    /// Not from another site (a browser says so in `Sec-Fetch-Site`; a script without one has no cookie to send).
    static func sameOrigin(_ request: Request) -> Bool {
        guard let site = request.headers[HeaderNames.fetchSite] else { return true }
        return site == "same-origin" || site == "none"
    }
}
