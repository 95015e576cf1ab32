import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoGitHub
@testable import SoWorkspace

/// A GitHub App's installation token: the App named by the environment, its JWT (RS256, checked with the key's
/// public half and by OpenSSL), the token asked for once and again before it ends, for the loop's repositories only.
@Suite struct GitHubAppTests {
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A new key (OpenSSL's), written in `h`'s directory: its PEM.
    static func key(_ h: Harness) async throws -> String {
        let r = try await LocalProcessRunner().run(
            [openssl!, "genrsa", "-traditional", "-out", h.path("app.pem"), "2048"], workingDirectory: nil,
            environment: [:], timeout: 60)
        try #require(r.exitCode == 0)
        return try h.read("app.pem")
    }

    static func decoded(_ part: Substring) throws -> JSON {
        var b64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        return try JSON.parse(try #require(Data(base64Encoded: b64)))
    }

    @Test func withoutAnAppIDThereIsNoApp() throws {
        let h = try Harness()
        #expect(try GitHubApp.fromEnvironment([:], fs: h.fs) == nil)
        #expect(try GitHubApp.fromEnvironment(["GITHUB_APP_ID": ""], fs: h.fs) == nil)
    }

    @Test(arguments: [
        (["GITHUB_APP_ID": "12; rm -rf /"], "GITHUB_APP_ID is not an App's ID"),
        (["GITHUB_APP_ID": "123"], "neither GITHUB_APP_PRIVATE_KEY nor GITHUB_APP_PRIVATE_KEY_FILE"),
        (
            ["GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY": "not a key"],
            "GITHUB_APP_PRIVATE_KEY: no PEM private key"
        ),
        (["GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY_FILE": "/nonexistent/app.pem"], "/nonexistent/app.pem"),
    ])
    func aWrongAppIsRefusedAtOnce(env: [String: String], says: String) throws {
        let h = try Harness()
        let e = #expect(throws: SoError.self) { try GitHubApp.fromEnvironment(env, fs: h.fs) }
        #expect(e?.message.contains(says) == true, "\(e?.message ?? "")")
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func theJWTIsRS256WithinGitHubsTenMinutesAndVerifies() async throws {
        let h = try Harness()
        let pem = try await Self.key(h)
        let bad = ["GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY": pem, "GITHUB_APP_INSTALLATION_ID": "x"]
        #expect(throws: SoError.self) { try GitHubApp.fromEnvironment(bad, fs: h.fs) }
        let env = ["GITHUB_APP_ID": "123", "GITHUB_APP_PRIVATE_KEY_FILE": h.path("app.pem")]
        let app = try #require(try GitHubApp.fromEnvironment(env, fs: h.fs))
        #expect(app.installation == nil)
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let jwt = try app.jwt(now: now)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
        #expect(try Self.decoded(parts[0]) == JSON.object(["alg": .string("RS256"), "typ": .string("JWT")]))
        let claims = try Self.decoded(parts[1])
        #expect(claims["iss"]?.string == "123")
        #expect(claims["iat"]?.int == 1_780_000_000 - 60 && claims["exp"]?.int == 1_780_000_000 + 540)
        var sig = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while sig.count % 4 != 0 { sig += "=" }
        let signature = [UInt8](try #require(Data(base64Encoded: sig)))
        #expect(app.key.verifySHA256(Array("\(parts[0]).\(parts[1])".utf8), signature: signature))
        // OpenSSL verifies it with the public key alone.
        try Data(signature).write(to: URL(fileURLWithPath: h.path("sig")))
        try Data("\(parts[0]).\(parts[1])".utf8).write(to: URL(fileURLWithPath: h.path("input")))
        let run = LocalProcessRunner()
        let pub = try await run.run(
            [Self.openssl!, "rsa", "-in", h.path("app.pem"), "-pubout", "-out", h.path("pub.pem")],
            workingDirectory: nil, environment: [:], timeout: 60)
        try #require(pub.exitCode == 0)
        let verified = try await run.run(
            [
                Self.openssl!, "dgst", "-sha256", "-verify", h.path("pub.pem"), "-signature", h.path("sig"),
                h.path("input"),
            ],
            workingDirectory: nil, environment: [:], timeout: 60)
        #expect(verified.exitCode == 0 && verified.stdout.contains("Verified OK"), "\(verified.stdout)")
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func theTokenIsAskedOnceAndAgainTenMinutesBeforeItEnds() async throws {
        let h = try Harness()
        let pem = try await Self.key(h)
        let app = try #require(
            try GitHubApp.fromEnvironment(["GITHUB_APP_ID": "77", "GITHUB_APP_PRIVATE_KEY": pem], fs: h.fs))
        let web = FakeWeb()
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        func token(_ t: String, endsAt: Date) -> WebResponse {
            WebResponse(
                status: 201,
                body: Data(#"{"token": "\#(t)", "expires_at": "\#(Timestamps.rfc3339(endsAt))"}"#.utf8))
        }
        web.answers = [
            WebResponse(status: 200, body: Data(#"{"id": 4242, "account": {"login": "Acme"}}"#.utf8)),
            token("ghs_first", endsAt: start.addingTimeInterval(3600)),
            token("ghs_second", endsAt: start.addingTimeInterval(7200)),
        ]
        var ctx = h.ctx
        ctx.web = web
        ctx.environment["GITHUB_API_URL"] = "http://127.0.0.1:9/"
        let tokens = try GitHubAppTokens(app: app, repositories: ["Acme/web", "acme/api"])
        #expect(try await tokens.token(ctx, now: start) == "ghs_first")
        #expect(try await tokens.token(ctx, now: start.addingTimeInterval(2999)) == "ghs_first")
        #expect(web.requests.count == 2)
        // 10 minutes before its end: a new one (the installation known now).
        #expect(try await tokens.token(ctx, now: start.addingTimeInterval(3000)) == "ghs_second")
        #expect(await tokens.given.count == 2)
        let r = web.requests
        #expect(
            r.map { "\($0.method) \($0.url)" } == [
                "GET http://127.0.0.1:9/repos/Acme/web/installation",
                "POST http://127.0.0.1:9/app/installations/4242/access_tokens",
                "POST http://127.0.0.1:9/app/installations/4242/access_tokens",
            ])
        // Asked with the App's JWT, for the loop's repositories only.
        for q in r {
            let auth = q.headers.first { $0.0 == "Authorization" }?.1 ?? ""
            #expect(auth.hasPrefix("Bearer ey") && auth.split(separator: ".").count == 3)
        }
        #expect(String(decoding: r[1].body ?? Data(), as: UTF8.self) == #"{"repositories":["web","api"]}"#)
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func gitHubsRefusalsAndOddAnswersAreErrorsWithoutTheToken() async throws {
        let h = try Harness()
        let pem = try await Self.key(h)
        let app = GitHubApp(id: "77", key: try RSAPrivateKey(pem: pem, source: "k"), installation: 9)
        let cases: [(WebResponse, String)] = [
            (
                WebResponse(status: 401, body: Data(#"{"message": "A JSON web token could not be decoded"}"#.utf8)),
                "GitHub gave no token for installation 9: A JSON web token could not be decoded"
            ),
            (WebResponse(status: 502, body: Data("<html>bad gateway</html>".utf8)), "HTTP 502"),
            (
                WebResponse(
                    status: 201, body: Data(#"{"token": "ghs_a'b", "expires_at": "2030-01-01T00:00:00Z"}"#.utf8)),
                "unexpected shape"
            ),
            (
                WebResponse(status: 201, body: Data(#"{"token": "ghs_ok", "expires_at": "soon"}"#.utf8)),
                "unexpected shape"
            ),
        ]
        for (answer, says) in cases {
            let web = FakeWeb()
            web.answers = [answer]
            var ctx = h.ctx
            ctx.web = web
            let tokens = try GitHubAppTokens(app: app, repositories: ["acme/web"])
            let e = await #expect(throws: SoError.self) { try await tokens.token(ctx, now: Date()) }
            #expect(e?.message.contains(says) == true, "\(e?.message ?? "")")
            #expect(e?.message.contains("ghs_") == false)
        }
    }

    @Test(.enabled(if: openssl != nil, "openssl is not installed"))
    func repositoriesOfTwoOwnersNeedTwoLoops() async throws {
        let h = try Harness()
        let app = GitHubApp(id: "77", key: try RSAPrivateKey(pem: try await Self.key(h), source: "k"), installation: 9)
        let e = #expect(throws: SoError.self) {
            try GitHubAppTokens(app: app, repositories: ["acme/web", "other/api"])
        }
        #expect(e?.message.contains("2 owners") == true)
    }
}
