import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDashboardServer
@testable import SoDeploy

/// The server listening on loopback, asked with curl: HTTPS from its own certificate (a cleartext request gets no
/// page), the Secure cookie and HSTS, and the Host allow-list against DNS rebinding.
@Suite(
    .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "no openssl or curl here"))
struct LiveServerTests {
    static func run(_ args: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = Pipe()
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A self-signed certificate for 127.0.0.1 and localhost, and its key, made in `dir`.
    static func certificate(in dir: TempDir) throws -> (cert: String, key: String) {
        let (cert, key) = (dir.file("cert.pem"), dir.file("key.pem"))
        let made = try run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days",
            "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key,
            "-out", cert,
        ])
        guard made.status == 0 else { throw SoError("openssl could not make a certificate") }
        return (cert, key)
    }

    /// Serves the fixture's cluster over HTTPS on a free port of 127.0.0.1 while `body` runs.
    func serving(_ body: (Int) async throws -> Void) async throws {
        let dir = try TempDir("so-dashboard-tls")
        defer { dir.cleanup() }
        let (cert, key) = try Self.certificate(in: dir)
        let c = try DashboardFixture.cluster()
        let feed = DashboardFeed(ctx: DashboardFixture.context(c), client: c, kubectlFlags: [], clusterName: "kind:so")
        let server = DashboardServer(
            feed: feed,
            access: DashboardAccess(
                token: RouteTests.token, csrf: "CSRF-TOKEN", port: 7878, transport: .https,
                allowedHosts: DashboardAccess.loopbackHosts("127.0.0.1")),
            actions: nil, hostName: "testhost")
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            try await server.run(
                host: "127.0.0.1", port: 0, tls: .init(certificate: cert, key: key), running: { bound.yield($0) })
        }
        defer { task.cancel() }
        var it = ports.makeAsyncIterator()
        let port = try #require(await it.next())
        try await body(port)
    }

    @Test func itServesHTTPSOnlyWithASecureCookieAndHSTS() async throws {
        try await serving { port in
            let base = "https://127.0.0.1:\(port)"
            var r = try Self.run(["curl", "-sk", "-i", "--max-time", "20", "\(base)/healthz"])
            #expect(
                r.out.hasPrefix("HTTP/1.1 200") && r.out.lowercased().contains("strict-transport-security: max-age"),
                "\(r.out)")
            r = try Self.run([
                "curl", "-sk", "-i", "--max-time", "20", "-d", "token=\(RouteTests.token)", "\(base)/signin",
            ])
            #expect(r.out.contains("; HttpOnly; SameSite=Strict; Secure"), "\(r.out)")
            #expect(!r.out.contains(RouteTests.token), "the token is never sent back")
            // Cleartext to the HTTPS port: no HTTP answer at all.
            r = try Self.run(["curl", "-s", "-i", "--max-time", "20", "http://127.0.0.1:\(port)/healthz"])
            #expect(r.status != 0 && !r.out.contains("ok"), "\(r.status) \(r.out)")
        }
    }

    @Test func onLoopbackAnotherNameIsRefused() async throws {
        try await serving { port in
            for (host, status) in [
                ("rebind.attacker.example:\(port)", "421"), ("localhost:\(port)", "200"), ("127.0.0.1:\(port)", "200"),
            ] {
                let r = try Self.run([
                    "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "-H", "Host: \(host)",
                    "https://127.0.0.1:\(port)/healthz",
                ])
                #expect(r.out == status, "\(host)")
            }
        }
    }

    @Test func aCertificateItCannotReadIsNamedWithWhatToGive() throws {
        let e = try #require(
            throws: SoError.self,
            performing: {
                _ = try DashboardServer.TLSFiles(certificate: "/nonexistent/cert.pem", key: "/nonexistent/key.pem")
                    .configuration()
            })
        #expect(e.message.hasPrefix("so dashboard cannot use --tls-cert /nonexistent/cert.pem: "), "\(e.message)")
        #expect(e.hint?.contains("PEM") == true)
    }
}
