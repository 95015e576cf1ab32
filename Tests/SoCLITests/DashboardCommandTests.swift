import Foundation
import SoTestSupport
import Testing

/// What `so dashboard` refuses before it serves anything (before it reads the cluster): actions over plain HTTP off
/// loopback, a token too short to be a key (never shown), half a TLS pair.
@Suite struct DashboardCommandTests {
    @Test func plainHTTPOffLoopbackIsRefusedUnlessItOnlyShows() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        for listen in ["0.0.0.0", "::", "192.0.2.10"] {
            let r = await runSo(["dashboard", "--listen", listen], cwd: t.path)
            #expect(r.code == 64, "\(listen): \(r.stderr)")
            #expect(
                r.stderr.contains("so dashboard will not take actions over plain HTTP on \(listen): anyone on the way")
                    && r.stderr.contains("hint: --tls-cert and --tls-key serve HTTPS; --trust-proxy behind a proxy")
                    && r.stderr.contains("--read-only shows"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        // Only showing (or told), it goes on to read the cluster: here there is none to read.
        for flags in [["--read-only"], ["--insecure-http"], ["--trust-proxy"]] {
            let r = await runSo(["dashboard", "--listen", "0.0.0.0"] + flags, cwd: t.path)
            #expect(r.code != 0 && !r.stderr.contains("plain HTTP"), "\(flags): \(r.stderr)")
        }
    }

    @Test func aShortTokenIsRefusedNamingTheRuleNotTheToken() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let short = "hunter2-but-longer-than-16"
        let r = await runSo(["dashboard"], cwd: t.path, environment: ["SO_DASHBOARD_TOKEN": short])
        #expect(r.code == 1)
        #expect(
            r.stderr.contains("SO_DASHBOARD_TOKEN has 26 characters: a dashboard's token needs at least 32")
                && r.stderr.contains("openssl rand -hex 32"), "\(r.stderr)")
        #expect(!(r.stdout + r.stderr).contains(short))
    }

    @Test func halfATLSPairIsRefused() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        for flags in [["--tls-cert", "c.pem"], ["--tls-key", "k.pem"]] {
            let r = await runSo(["dashboard"] + flags, cwd: t.path)
            #expect(r.code == 64 && r.stderr.contains("needs --tls-cert and --tls-key together"), "\(r.stderr)")
        }
    }
}
