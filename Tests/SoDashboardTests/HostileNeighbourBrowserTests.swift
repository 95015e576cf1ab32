import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDashboardServer
@testable import SoDeploy

/// The dashboard's neighbours, from outside, in headless Chromium (Debian's chromium and chromedriver, Selenium
/// from PyPI; Tests/SoCLITests/Browser/hostile_neighbour.py says each case): the sign-in link's token in no
/// access log, a cleartext request to the HTTPS listener, another origin on 127.0.0.1 using the visitor's cookie,
/// a planted namespace annotation. The server is this process's (the fixture's cluster): no node needed.
@Suite(
    .serialized,
    .enabled(if: Chromium.available, "no chromium, chromedriver, selenium and openssl here: .ci/run installs them"))
struct HostileNeighbourBrowserTests {
    @Test func hostileNeighboursGetNothing() async throws {
        let dir = try TempDir("so-dashboard-browser")
        defer { dir.cleanup() }
        let (cert, key) = try LiveServerTests.certificate(in: dir)
        let c = try DashboardFixture.cluster()
        var ctx = DashboardFixture.context(c)
        ctx.fs = try RouteTests.ownedFiles()
        try RouteTests.plant(c)
        let feed = DashboardFeed(ctx: ctx, client: c, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        func server(_ port: Int, _ transport: DashboardAccess.Transport) -> DashboardServer {
            DashboardServer(
                feed: feed,
                access: DashboardAccess(
                    token: RouteTests.token, csrf: "CSRF-TOKEN", port: port, transport: transport,
                    allowedHosts: transport == .https ? DashboardAccess.loopbackHosts("127.0.0.1") : nil),
                actions: DashboardActions(ctx: ctx, cluster: ClusterOptions()), hostName: "testhost")
        }
        // The twin behind the script's proxy (an ingress holding the certificate): plain HTTP, told the scheme.
        try await LiveServerTests.whileServing(
            server(7878, .https), server(7879, .proxied), tls: .init(certificate: cert, key: key)
        ) { ports in
            try await Self.browse(https: ports[0], plain: ports[1], cert: cert, key: key, feed: feed)
        }
        let logged = (ctx.console as? CapturedConsole).map { $0.stdout + $0.stderr } ?? ""
        #expect(!logged.contains(RouteTests.token), "the token is in the server's log")
    }

    /// Runs hostile_neighbour.py against the two listeners.
    static func browse(https: Int, plain: Int, cert: String, key: String, feed: DashboardFeed) async throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", Path.join(RepoPaths.root, "Tests/SoCLITests/Browser/hostile_neighbour.py"), "--url",
            "https://127.0.0.1:\(https)/signin#token=\(RouteTests.token)", "--plain", "http://127.0.0.1:\(plain)",
            "--token", RouteTests.token, "--cert", cert, "--key", key, "--handshake",
        ]
        let (out, into) = (Pipe(), Pipe())
        p.standardOutput = out
        p.standardInput = into
        p.standardError = FileHandle.standardError
        try p.run()
        // While the other origin's page is open, no event stream of the dashboard is served to it (a served one
        // marks its namespace open on the feed).
        var said = ""
        var streamed = false
        for await line in Self.lines(out.fileHandleForReading) {
            said += line + "\n"
            guard line == "HOSTILE-OPEN" else { continue }
            // The page stays open until told: a loaded machine stretches this look, never into the script's next step.
            let until = ContinuousClock.now + .seconds(2.5)
            while ContinuousClock.now < until {
                if await feed.watching["fix-login"] != nil { streamed = true }
                try await Task.sleep(for: .milliseconds(100))
            }
            into.fileHandleForWriting.write(Data("looked\n".utf8))
        }
        p.waitUntilExit()
        print(said)
        #expect(p.terminationStatus == 0, "\(said)")
        #expect(said.contains("HOSTILE-OPEN") && !streamed, "another origin was served the event stream")
        #expect(said.contains("all hostile-neighbour cases passed"))
    }
}

extension HostileNeighbourBrowserTests {
    /// `handle`'s lines as they come, read on a thread of their own (a read blocks).
    static func lines(_ handle: FileHandle) -> AsyncStream<String> {
        let (lines, out) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let nl = buffer.firstIndex(of: 10) {
                    out.yield(String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...nl)
                }
            }
            out.finish()
        }
        return lines
    }
}

enum Chromium {
    static let available =
        ["/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/bin/openssl"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        && (try? Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "-c", "import selenium"]))
            .map {
                $0.waitUntilExit()
                return $0.terminationStatus == 0
            } ?? false
}
