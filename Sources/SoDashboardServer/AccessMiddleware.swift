import Foundation
import Hummingbird
import SoDashboard

/// The token's check, before every route but `/healthz`.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: DashboardAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if request.uri.path == "/healthz" { return try await next(request, context) }
        if let given = request.uri.queryParameters.get("token") {
            guard DashboardAccess.same(given, access.token) else { return DashboardAccess.forbidden() }
            // The token goes into the cookie and out of the address bar (and the browser's history).
            let rest = request.uri.queryParameters.filter { $0.key != "token" }
                .map { "\(HTML.urlComponent(String($0.key)))=\(HTML.urlComponent(String($0.value)))" }
            let path = request.uri.path.hasPrefix("/") && !request.uri.path.hasPrefix("//") ? request.uri.path : "/"
            var r = Response(
                status: .seeOther,
                headers: [
                    .location: path + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&")),
                    .setCookie: "\(access.cookieName)=\(access.token); Path=/; HttpOnly; SameSite=Strict",
                ])
            for (k, v) in DashboardAccess.securityHeaders { r.headers[k] = v }
            return r
        }
        guard let cookie = access.cookie(request), DashboardAccess.same(cookie, access.token) else {
            return DashboardAccess.forbidden()
        }
        var r = try await next(request, context)
        for (k, v) in DashboardAccess.securityHeaders { r.headers[k] = v }
        return r
    }
}
