import Foundation
import HTTPTypes
import Hummingbird

/// Who may use the pages: whoever shows the run's token once (in the URL `so dashboard` prints), which is then
/// kept in a cookie, as Jupyter does. Anything else gets a 403 and nothing more. Every response carries a
/// Content-Security-Policy that allows this origin's script and style only, and no framing.
public struct DashboardAccess: Sendable {
    public let token: String
    /// The token every POST carries (in its form), beside the cookie.
    public let csrf: String
    public let cookieName: String

    public init(token: String, csrf: String, port: Int) {
        self.token = token
        self.csrf = csrf
        cookieName = "so-dashboard-\(port)"
    }

    /// A token of 32 random bytes, as hex.
    public static func newToken(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

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
        for field in request.headers[values: .cookie] {
            for part in field.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == cookieName { return String(kv[1]) }
            }
        }
        return nil
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

    static func forbidden() -> Response {
        var r = Response(
            status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: "forbidden\n")))
        for (k, v) in securityHeaders { r.headers[k] = v }
        return r
    }
}
