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

    @Test func githubsWebhookNeedsItsSecretAndARepositoryAndShowsNeither() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let r = await runSo(["dashboard", "--github-repo", "acme/app"], cwd: t.path)
        #expect(r.code == 64, "\(r.stderr)")
        #expect(
            r.stderr.contains("so dashboard will not take GitHub's deliveries without the webhook's secret")
                && r.stderr.contains("hint: give --github-secret-file PATH (or SO_GITHUB_WEBHOOK_SECRET)"),
            "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let secret = "a-webhook-secret-of-enough-length"
        let file = t.path + "/secret"
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let noRepo = await runSo(["dashboard", "--github-secret-file", file], cwd: t.path)
        #expect(
            noRepo.code == 64 && noRepo.stderr.contains("has a webhook secret but no repository"), "\(noRepo.stderr)")
        let fromEnv = await runSo(["dashboard"], cwd: t.path, environment: ["SO_GITHUB_WEBHOOK_SECRET": secret])
        #expect(fromEnv.code == 64 && fromEnv.stderr.contains("no repository"), "\(fromEnv.stderr)")
        let badRepo = await runSo(
            ["dashboard", "--github-secret-file", file, "--github-repo", "acme/../x"], cwd: t.path)
        #expect(badRepo.code == 64 && badRepo.stderr.contains("is not a repository's OWNER/NAME"), "\(badRepo.stderr)")
        let missing = await runSo(
            ["dashboard", "--github-secret-file", t.path + "/absent", "--github-repo", "acme/app"], cwd: t.path)
        #expect(
            missing.code == 64 && missing.stderr.contains("cannot read the webhook secret file"), "\(missing.stderr)")
        let short = await runSo(
            ["dashboard", "--github-repo", "acme/app"], cwd: t.path,
            environment: ["SO_GITHUB_WEBHOOK_SECRET": "tiny-secret"])
        #expect(
            short.code == 1 && short.stderr.contains("has 11 characters: so dashboard needs at least 20"),
            "\(short.stderr)")
        // Both given: it goes on to read the cluster (here there is none).
        let both = await runSo(["dashboard", "--github-secret-file", file, "--github-repo", "acme/app"], cwd: t.path)
        #expect(both.code != 0 && !both.stderr.contains("webhook"), "\(both.stderr)")
        for run in [r, noRepo, fromEnv, badRepo, missing, short, both] {
            #expect(!(run.stdout + run.stderr).contains(secret) && !(run.stdout + run.stderr).contains("tiny-secret"))
        }
    }

    /// The loop's config is read as `so github loop` reads it, before the cluster: a file that does not read stops
    /// the dashboard with the loop's own error (file:line and a hint); one that reads goes on to the cluster.
    @Test func theLoopsConfigIsReadBeforeTheCluster() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let missing = await runSo(["dashboard", "--github-loop-config", "absent.yml"], cwd: t.path)
        #expect(missing.code != 0 && missing.stderr.contains("absent.yml"), "\(missing.stderr)")
        try Data("repositories: [acme/web]\nlabel: so\nstack: agent-workspace\nbudgte: {tasks: 3}\n".utf8).write(
            to: URL(fileURLWithPath: t.path + "/bad.yml"))
        let bad = await runSo(["dashboard", "--github-loop-config", "bad.yml"], cwd: t.path)
        #expect(bad.code != 0 && bad.stderr.contains("bad.yml:4") && bad.stderr.contains("budget"), "\(bad.stderr)")
        try Data("repositories: [acme/web]\nlabel: so\nstack: agent-workspace\nbudget: {tasks: 3}\n".utf8).write(
            to: URL(fileURLWithPath: t.path + "/loop.yml"))
        let good = await runSo(["dashboard", "--github-loop-config", "loop.yml"], cwd: t.path)
        #expect(good.code != 0 && !good.stderr.contains("loop.yml"), "it goes on to the cluster: \(good.stderr)")
    }
}
