import Foundation
import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the peer's address (whose wrong tokens are counted).
public struct DashboardContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Around every route, the router's 404 and every error (a body too large, a thrown error): a `Host` this
/// server answers to, then the security headers on whatever the response is, and HSTS over HTTPS.
struct HardeningMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: DashboardAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var r: Response
        if let allowed = access.allowedHosts, !allowed.contains(Self.hostName(request.head.authority)) {
            // DNS rebinding: another site's name that resolves to this machine.
            r = DashboardServer.text(
                "this dashboard answers to 127.0.0.1 and localhost only\n", status: .misdirectedRequest)
        } else {
            do {
                r = try await next(request, context)
            } catch let e as HTTPResponseError {
                r = DashboardServer.text("\(e.status.reasonPhrase.lowercased())\n", status: e.status)
            } catch {
                context.logger.error("dashboard: \(request.uri.path): \(error)")
                r = DashboardServer.text("internal error\n", status: .internalServerError)
            }
        }
        for (k, v) in DashboardAccess.securityHeaders { r.headers[k] = v }
        if access.isHTTPS(request) { r.headers[HeaderNames.strictTransportSecurity] = DashboardAccess.hsts }
        return r
    }

    /// A `Host` without its port, lowercased (`[::1]:7878` → `::1`); "" when absent.
    static func hostName(_ authority: String?) -> String {
        guard let a = authority?.lowercased(), !a.isEmpty else { return "" }
        if a.hasPrefix("[") { return a.firstIndex(of: "]").map { String(a[a.index(after: a.startIndex)..<$0]) } ?? a }
        return a.split(separator: ":", maxSplits: 1).first.map(String.init) ?? a
    }
}

/// The sign-in, before every route but `/healthz`, `/signin` and its script: a valid session's cookie, or a 403.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = DashboardContext
    let access: DashboardAccess

    static let open: Set<String> = ["/healthz", "/signin", "/static/signin.js", "/static/app.css"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if Self.open.contains(request.uri.path) { return try await next(request, context) }
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
            return DashboardAccess.forbidden()
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
