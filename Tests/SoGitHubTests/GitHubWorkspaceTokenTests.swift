import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// The config's keys of issue 64 (`trust`, `bots`, `post-logs`), and the token a workspace gets: none (the loop
/// pushes its work), so `workspace-token-env` is refused.
@Suite struct GitHubWorkspaceTokenTests {
    static let base = "repositories: [acme/web]\nlabel: so\nstack: agent-workspace\n"

    @Test func theKeysOfAPublicRepositoryAreRead() throws {
        let c = try GitHubLoopConfig.parse(
            Self.base
                + "trust: maintain\nbots: ['Renovate[bot]']\npost-logs: true\n",
            file: "loop.yml")
        #expect(c.trust == .maintain && c.bots == ["renovate[bot]"] && c.postLogs)
        let d = try GitHubLoopConfig.parse(Self.base, file: "loop.yml")
        #expect(d.trust == .write && d.bots.isEmpty && !d.postLogs)
    }

    @Test(arguments: [
        ("trust: read\n", "loop.yml:4: 'trust' is 'read', not write, maintain or admin"),
        ("trust: triage\n", "loop.yml:4: 'trust' is 'triage', not write, maintain or admin"),
        ("bots: [renovate]\n", "loop.yml:4: 'bots' holds 'renovate', not an App's bot login"),
        ("bots:\n  - a[bot]\n  - 'x y[bot]'\n", "loop.yml:6: 'bots' holds 'x y[bot]', not an App's bot login"),
        (
            "workspace-token-env: WORKSPACE_GITHUB_TOKEN\n",
            "loop.yml:4: 'workspace-token-env' is no longer read: workspaces get no GitHub token, the loop pushes "
                + "their work"
        ),
    ])
    func mistakesAreRefusedWithTheirLine(text: String, message: String) {
        let e = #expect(throws: SoError.self) { try GitHubLoopConfig.parse(Self.base + text, file: "loop.yml") }
        #expect(e.map { ($0.location.map { "\($0): " } ?? "") + $0.message } == message)
        #expect(e?.hint != nil)
    }

    @Test func aWorkspaceIsMadeWithNoneOfTheLoopsTokens() {
        let env = ["GITHUB_TOKEN": "loop-token", "GH_TOKEN": "loop-gh", "GIT_TOKEN": "loop-git", "HOME": "/h"]
        #expect(GitHubLoopLive.workspaceEnvironment(env) == ["HOME": "/h"])
    }

    /// The loop's push: its token reaches git through the environment only, read by a credential helper that
    /// replaces any other.
    @Test func theLoopPushesWithItsTokenInTheEnvironmentOnly() throws {
        var ctx = try Harness().ctx
        ctx.environment = ["GITHUB_TOKEN": "loop-token", "PATH": "/bin"]
        let env = GitHubLoopLive.pushEnvironment(ctx)
        #expect(env["SO_GITHUB_PUSH_TOKEN"] == "loop-token" && env["GIT_TERMINAL_PROMPT"] == "0")
        #expect(env["GIT_CONFIG_COUNT"] == "2" && env["GIT_CONFIG_VALUE_0"] == "")
        #expect(env["GIT_CONFIG_VALUE_1"]?.contains("$SO_GITHUB_PUSH_TOKEN") == true)
        #expect(env["GIT_CONFIG_VALUE_1"]?.contains("loop-token") == false, "the helper names the variable only")
    }
}
