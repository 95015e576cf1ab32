import Foundation
import SoBasics
import SoTestSupport
import Testing

/// A running `so dashboard` (its stdout in `t/page.out`), signed in with curl: the address it printed, and requests
/// with the session's cookie. What AgentCLIE2ETests and HostileRecordE2ETests read the page through.
struct PageSession {
    let base: String
    let jar: String

    /// Waits up to 30 s for the address in `t/page.out`, then signs in with `token`.
    static func signIn(_ token: String, in t: TempDir, timeout: Int = 120) async throws -> PageSession {
        var base = ""
        for _ in 0..<300 where base.isEmpty {
            let out = (try? t.read("page.out")) ?? ""
            if let r = out.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                base = String(out[r])
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(!base.isEmpty, "the page did not start: \((try? t.read("page.err")) ?? "")")
        let s = PageSession(base: base, jar: t.file("page.cookies"))
        _ = try await s.curl(["-d", "token=\(token)", "\(base)/signin"], timeout: timeout)
        return s
    }

    /// curl with the session's cookies: its stdout.
    func curl(_ args: [String], timeout: Int = 120) async throws -> String {
        try await Access.run(["curl", "-s", "--max-time", String(timeout), "-b", jar, "-c", jar] + args).stdout
    }
}
