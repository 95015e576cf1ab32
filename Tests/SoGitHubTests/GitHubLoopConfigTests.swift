import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// The loop's config: a full file, defaults, and hostile or mistaken files refused with file:line and a hint.
@Suite struct GitHubLoopConfigTests {
    @Test func aFullConfig() throws {
        let c = try GitHubLoopConfig.parse(
            """
            repositories: [acme/web, Acme/API]
            label: so
            prefix: /agent
            stack: agent-workspace
            config: [GIT_REF=main]
            agent: claude
            forks: true
            lease: 45m
            keep-days: 30
            budget:
              tasks: 10
              wall-clock: 8h
              cost: $2.50
              workspaces: 3
            """, file: "loop.yml")
        var want = GitHubLoopConfig(repositories: ["acme/web", "Acme/API"], label: "so", stack: "agent-workspace")
        want.prefix = "/agent"
        want.config = ["GIT_REF=main"]
        want.agent = "claude"
        want.forks = true
        want.lease = 45 * 60
        want.keepDays = 30
        want.budget = .init(tasks: 10, wallClock: 8 * 3600, cost: 2.5, workspaces: 3)
        #expect(c == want)
        #expect(c.watches("ACME/web") && c.watches("acme/api") && !c.watches("acme/other"))
    }

    /// The loop file of examples/dashboard/so-github-loop.yml (its ConfigMap's loop.yml) is one the loop reads.
    @Test func theInClusterExamplesLoopFileParses() throws {
        let text = try String(
            contentsOfFile: Path.join(RepoPaths.root, "examples/dashboard/so-github-loop.yml"), encoding: .utf8)
        let start = try #require(text.range(of: "  loop.yml: |\n"))
        let end = try #require(text.range(of: "\n---\n", range: start.upperBound..<text.endIndex))
        let file = text[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
        let c = try GitHubLoopConfig.parse(file, file: "loop.yml")
        #expect(c.repositories == ["acme/web"] && c.stack == "agent-workspace" && c.budget.workspaces == 4)
        #expect(c.config.contains("GIT_USER_NAME=so-bot"))
    }

    @Test func defaults() throws {
        let c = try GitHubLoopConfig.parse(
            "repositories: acme/web\nlabel: so\nstack: agent-workspace\n", file: "loop.yml")
        #expect(c.prefix == "/so" && c.config.isEmpty && c.agent == nil && !c.forks && c.budget == .init())
        #expect(c.lease == 1800 && c.keepDays == 14)
    }

    @Test(arguments: [
        ("", "loop.yml: the loop's config is empty"),
        ("- a\n", "loop.yml:1: the loop's config must be a mapping, not a list"),
        ("label: so\nstack: s\n", "loop.yml:1: the loop's config is missing 'repositories'"),
        (
            "repositories: [acme/web]\nlabel: so\nstack: s\nlable: x\n",
            "loop.yml:4: unknown key 'lable' in the loop's config"
        ),
        (
            "repositories: [acme/web, 'a b/c']\nlabel: so\nstack: s\n",
            "loop.yml:1: 'repositories' holds 'a b/c', not a repository's OWNER/NAME"
        ),
        ("repositories: []\nlabel: so\nstack: s\n", "loop.yml:1: 'repositories' is empty"),
        (
            "repositories: [a/b]\nlabel: \"s\\u0007\"\nstack: s\n",
            "loop.yml:2: 'label' must be 1 to 256 bytes without control characters"
        ),
        ("repositories: [a/b]\nlabel: so\nstack: s\nprefix: / so\n", "loop.yml:4: 'prefix' holds a space"),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nconfig: [A=1, nope]\n",
            "loop.yml:4: 'config' holds 'nope', not KEY=VALUE"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nlease: 10s\n",
            "loop.yml:4: 'lease' is '10s', not a duration of a minute or more"
        ),
        ("repositories: [a/b]\nlabel: so\nstack: s\nkeep-days: 0\n", "loop.yml:4: 'keep-days' must be above 0"),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nforks: maybe\n",
            "loop.yml:4: 'forks' must be true or false, not 'maybe'"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nbudget:\n  tasks: 0\n",
            "loop.yml:5: 'budget.tasks' must be above 0"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nbudget:\n  wall-clock: soon\n",
            "loop.yml:5: 'budget.wall-clock' is 'soon', not a duration"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nbudget:\n  cost: -1\n",
            "loop.yml:5: 'budget.cost' is '-1', not dollars"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nbudget:\n  taks: 1\n",
            "loop.yml:5: unknown key 'taks' in 'budget'"
        ),
        (
            "repositories: [a/b]\nlabel: so\nstack: s\nbudget: [1]\n",
            "loop.yml:4: 'budget' must be a mapping, not a list"
        ),
    ])
    func refusedWithItsPlace(text: String, message: String) {
        do {
            _ = try GitHubLoopConfig.parse(text, file: "loop.yml")
            Issue.record("accepted: \(text)")
        } catch let e as SoError {
            let line = (e.location.map { "\($0): " } ?? "") + e.message
            #expect(line == message)
            #expect(e.hint != nil, "every refusal has a hint")
            #expect(!line.contains("\n") && line.first?.isLowercase == true)
        } catch { Issue.record("\(error)") }
    }
}
