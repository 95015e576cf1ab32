import Foundation
import Hummingbird
import NIOCore

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
