import Foundation
import SoBasics
import Testing

@testable import SoWorkspace

/// The config's keys of issue 64 (`trust`, `bots`, `post-logs`, `workspace-token-env`), and the token a workspace
/// gets: with a token (no App), the one `workspace-token-env` names, never the loop's own.
@Suite struct GitHubWorkspaceTokenTests {
    static let base = "repositories: [acme/web]\nlabel: so\nstack: agent-workspace\n"

    @Test func theKeysOfAPublicRepositoryAreRead() throws {
        let c = try GitHubLoopConfig.parse(
            Self.base
                + "trust: maintain\nbots: ['Renovate[bot]']\npost-logs: true\nworkspace-token-env: WORKSPACE_GITHUB_TOKEN\n",
            file: "loop.yml")
        #expect(c.trust == .maintain && c.bots == ["renovate[bot]"] && c.postLogs)
        #expect(c.workspaceTokenEnv == "WORKSPACE_GITHUB_TOKEN")
        let d = try GitHubLoopConfig.parse(Self.base, file: "loop.yml")
        #expect(d.trust == .write && d.bots.isEmpty && !d.postLogs && d.workspaceTokenEnv == nil)
    }

    @Test(arguments: [
        ("trust: read\n", "loop.yml:4: 'trust' is 'read', not write, maintain or admin"),
        ("trust: triage\n", "loop.yml:4: 'trust' is 'triage', not write, maintain or admin"),
        ("bots: [renovate]\n", "loop.yml:4: 'bots' holds 'renovate', not an App's bot login"),
        ("bots:\n  - a[bot]\n  - 'x y[bot]'\n", "loop.yml:6: 'bots' holds 'x y[bot]', not an App's bot login"),
        (
            "workspace-token-env: GITHUB_TOKEN\n",
            "loop.yml:4: 'workspace-token-env' is 'GITHUB_TOKEN', not a variable of its own"
        ),
        ("workspace-token-env: 1TOKEN\n", "loop.yml:4: 'workspace-token-env' is '1TOKEN', not a variable of its own"),
        ("workspace-token-env: A-B\n", "loop.yml:4: 'workspace-token-env' is 'A-B', not a variable of its own"),
    ])
    func mistakesAreRefusedWithTheirLine(text: String, message: String) {
        let e = #expect(throws: SoError.self) { try GitHubLoopConfig.parse(Self.base + text, file: "loop.yml") }
        #expect(e.map { ($0.location.map { "\($0): " } ?? "") + $0.message } == message)
        #expect(e?.hint != nil)
    }

    @Test func withATokenTheLoopStartsOnlyWithTheWorkspacesOwn() throws {
        var c = GitHubLoopConfig(repositories: ["acme/web"], label: "so", stack: "s")
        let loop = ["GITHUB_TOKEN": "loop-token", "WS_TOKEN": "workspace-token"]
        let none = #expect(throws: SoError.self) { try c.workspaceToken(loop) }
        #expect(none?.message.hasPrefix("the loop's config names no workspace-token-env") == true)
        c.workspaceTokenEnv = "WS_TOKEN"
        #expect(try c.workspaceToken(loop) == "workspace-token")
        let unset = #expect(throws: SoError.self) { try c.workspaceToken(["GITHUB_TOKEN": "loop-token"]) }
        #expect(
            unset?.message
                == "WS_TOKEN (the config's workspace-token-env) is not set: the workspaces would have no token")
        for own in ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"] {
            let same = #expect(throws: SoError.self) { try c.workspaceToken([own: "t", "WS_TOKEN": "t"]) }
            #expect(same?.message.hasPrefix("WS_TOKEN holds the loop's own token") == true, "\(own)")
        }
    }

    @Test func aWorkspaceIsMadeWithItsOwnTokenAndNoneOfTheLoops() {
        let env = ["GITHUB_TOKEN": "loop-token", "GH_TOKEN": "loop-gh", "GIT_TOKEN": "loop-git", "HOME": "/h"]
        #expect(
            GitHubLoopLive.workspaceEnvironment(env, token: "workspace-token", app: false)
                == ["GITHUB_TOKEN": "workspace-token", "HOME": "/h"])
        #expect(
            GitHubLoopLive.workspaceEnvironment(env, token: nil, app: false) == ["HOME": "/h"],
            "no workspace token: none at all, never the loop's")
        // With an App, GITHUB_TOKEN is the App's installation token `acting` put there.
        #expect(
            GitHubLoopLive.workspaceEnvironment(env, token: nil, app: true)
                == ["GITHUB_TOKEN": "loop-token", "HOME": "/h"])
    }
}
