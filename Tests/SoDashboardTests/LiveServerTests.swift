import Foundation
import ServiceLifecycleTestKit
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
    /// Runs `args` and waits for it on a thread of its own: a test that blocked the cooperative pool (two threads on
    /// two cores) would starve the server it is asking, whose handlers run there, and curl would time out.
    static func run(_ args: [String]) async throws -> (status: Int32, out: String) {
        try await withCheckedThrowingContinuation { done in
            Thread.detachNewThread { done.resume(with: Result { try runBlocking(args) }) }
        }
    }

    static func runBlocking(_ args: [String]) throws -> (status: Int32, out: String) {
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
        let made = try runBlocking([
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
        try await Self.whileServing(server, tls: .init(certificate: cert, key: key)) { try await body($0[0]) }
    }

    /// Runs `server` on a free port of 127.0.0.1 while `body` runs, then shuts it down as SIGTERM does (gracefully):
    /// a cancelled server task drops its open connections' writers unfinished, which NIO traps on.
    static func whileServing(
        _ servers: DashboardServer..., tls: DashboardServer.TLSFiles?, _ body: ([Int]) async throws -> Void
    ) async throws {
        try await testGracefulShutdown { shutdown in
            let (ports, bound) = AsyncStream.makeStream(of: (Int, Int).self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, server) in servers.enumerated() {
                    group.addTask {
                        do {
                            try await server.run(host: "127.0.0.1", port: 0, tls: i == 0 ? tls : nil) {
                                bound.yield((i, $0))
                            }
                        } catch {
                            bound.finish()
                            throw error
                        }
                    }
                }
                var listening: [Int: Int] = [:]
                for await (i, port) in ports {
                    listening[i] = port
                    if listening.count == servers.count { break }
                }
                // One could not listen: its error is the answer.
                guard listening.count == servers.count else { return try await group.waitForAll() }
                var failure: (any Error)?
                do { try await body(servers.indices.map { listening[$0]! }) } catch { failure = error }
                shutdown.triggerGracefulShutdown()
                try await group.waitForAll()
                if let failure { throw failure }
            }
        }
    }

    @Test func itServesHTTPSOnlyWithASecureCookieAndHSTS() async throws {
        try await serving { port in
            let base = "https://127.0.0.1:\(port)"
            var r = try await Self.run(["curl", "-sk", "-i", "--max-time", "20", "\(base)/healthz"])
            #expect(
                r.out.hasPrefix("HTTP/1.1 200") && r.out.lowercased().contains("strict-transport-security: max-age"),
                "\(r.out)")
            r = try await Self.run([
                "curl", "-sk", "-i", "--max-time", "20", "-d", "token=\(RouteTests.token)", "\(base)/signin",
            ])
            #expect(r.out.contains("; HttpOnly; SameSite=Strict; Secure"), "\(r.out)")
            #expect(!r.out.contains(RouteTests.token), "the token is never sent back")
            // Cleartext to the HTTPS port: no HTTP answer at all.
            r = try await Self.run(["curl", "-s", "-i", "--max-time", "20", "http://127.0.0.1:\(port)/healthz"])
            #expect(r.status != 0 && !r.out.contains("ok"), "\(r.status) \(r.out)")
        }
    }

    @Test func onLoopbackAnotherNameIsRefused() async throws {
        try await serving { port in
            for (host, status) in [
                ("rebind.attacker.example:\(port)", "421"), ("localhost:\(port)", "200"), ("127.0.0.1:\(port)", "200"),
            ] {
                let r = try await Self.run([
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
