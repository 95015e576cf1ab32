import Foundation
import HTTPTypes
import Hummingbird
import SoBasics

/// Who may use the pages: whoever signs in once with the run's token (the link `so dashboard` prints carries it in
/// its fragment, which no server sees; the page posts it to `/signin`), then holds a session's cookie that ends
/// after `sessionSeconds` or at sign-out. Anything else gets a 403 and nothing more. Every response, errors
/// included, carries a Content-Security-Policy that allows this origin's script and style only, and no framing.
public struct DashboardAccess: Sendable {
    public let token: String
    /// The token every POST carries (in its form), beside the cookie.
    public let csrf: String
    public let cookieName: String
    /// How requests reach the server: what makes a cookie `Secure` and a response carry HSTS.
    public var transport: Transport
    /// The names a request's `Host` may carry (a server on loopback answers to its own names only, so a page of
    /// another site whose name resolves to 127.0.0.1 cannot read it); nil: any.
    public var allowedHosts: Set<String>?
    /// Behind a trusted proxy, with actions: only what the proxy says came over HTTPS is answered (`/healthz`
    /// aside), so neither the token, the cookie nor an action crosses a network in the clear.
    public var httpsOnly = false
    /// How long a sign-in lasts (the cookie's Max-Age, and the session's end on the server).
    public var sessionSeconds: Int = 12 * 3600
    let sessions: Sessions
    let throttle: Throttle
    let now: @Sendable () -> Date

    public enum Transport: Sendable, Equatable {
        /// Plain HTTP, not behind a proxy that says otherwise.
        case http
        /// TLS served by `so dashboard` itself.
        case https
        /// Behind a proxy trusted to say the scheme a client used (`X-Forwarded-Proto`) and who it is
        /// (the last `X-Forwarded-For`).
        case proxied
    }

    public init(
        token: String, csrf: String, port: Int, transport: Transport = .http, allowedHosts: Set<String>? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        mint: @escaping @Sendable () -> String = { DashboardAccess.newToken(DashboardAccess.randomBytes(32)) }
    ) {
        self.token = token
        self.csrf = csrf
        self.transport = transport
        self.allowedHosts = allowedHosts
        self.now = now
        cookieName = "so-dashboard-\(port)"
        sessions = Sessions(mint: mint)
        throttle = Throttle()
    }

    /// The shortest token `SO_DASHBOARD_TOKEN` may hold (as `openssl rand -hex 16` prints).
    public static let minimumTokenLength = 32

    /// A configured token, refused (without showing it) when it is too short to be a key.
    public static func configuredToken(_ value: String) throws -> String {
        guard value.count >= minimumTokenLength else {
            throw SoError(
                "SO_DASHBOARD_TOKEN has \(value.count) characters: a dashboard's token needs at least "
                    + "\(minimumTokenLength)",
                hint: "set it to the output of `openssl rand -hex 32`, or unset it for a new token each run")
        }
        return value
    }

    /// The names a server bound to `listen` answers to: loopback's names for a loopback address, nil (any)
    /// otherwise.
    public static func loopbackHosts(_ listen: String) -> Set<String>? {
        guard isLoopback(listen) else { return nil }
        return ["127.0.0.1", "localhost", "::1", listen.lowercased()]
    }

    /// Whether `address` is this machine only (127.0.0.0/8, ::1, localhost).
    public static func isLoopback(_ address: String) -> Bool {
        let a = address.lowercased()
        return a == "localhost" || a == "::1" || a == "[::1]" || a.hasPrefix("127.")
    }

    /// A token of 32 random bytes, as hex.
    public static func newToken(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// `n` bytes from the system's CSPRNG (getrandom).
    public static func randomBytes(_ n: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    /// Equal, in a time that does not depend on where they first differ.
    public static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    func cookie(_ request: Request) -> String? {
        CookieHeader.value(named: cookieName, in: request.headers[values: .cookie])
    }

    /// Whether the client reached this server over HTTPS (directly, or as the trusted proxy says).
    func isHTTPS(_ request: Request) -> Bool {
        switch transport {
        case .https: return true
        case .http: return false
        case .proxied:
            return request.headers[HeaderNames.forwardedProto]?.split(separator: ",").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "https" } ?? false
        }
    }

    /// Who is asking, for the count of wrong tokens: the peer, or behind a trusted proxy the address it appended.
    func client(_ request: Request, peer: String?) -> String {
        if transport == .proxied, let forwarded = request.headers[HeaderNames.forwardedFor],
            let last = forwarded.split(separator: ",").last
        {
            return last.trimmingCharacters(in: .whitespaces)
        }
        return peer ?? "?"
    }

    /// The session cookie (`Secure` when the client came over HTTPS); nil ends it.
    func setCookie(_ session: String?, _ request: Request) -> String {
        "\(cookieName)=\(session ?? ""); Path=/; Max-Age=\(session == nil ? 0 : sessionSeconds); HttpOnly; "
            + "SameSite=Strict" + (isHTTPS(request) ? "; Secure" : "")
    }

    static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
        (.xContentTypeOptions, "nosniff"), (HeaderNames.referrerPolicy, "no-referrer"), (.cacheControl, "no-store"),
        (HeaderNames.frameOptions, "DENY"),
    ]

    static let hsts = "max-age=31536000"

    static func forbidden() -> Response { DashboardServer.text("forbidden\n", status: .forbidden) }

    /// A request `httpsOnly` refuses.
    static func notHTTPS() -> Response {
        DashboardServer.text(
            "forbidden: this page takes actions, so it answers over HTTPS only (its proxy said this request was not)\n",
            status: .forbidden)
    }
}
