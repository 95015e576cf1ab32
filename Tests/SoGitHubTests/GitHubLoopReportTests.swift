import Foundation
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// The loop's outcome comment and thread reply: what a task's report and log become, bounded and scrubbed.
@Suite struct GitHubLoopReportTests {
    static func commits(_ n: Int) -> [TaskRecord.Commit] {
        (1...n).map { TaskRecord.Commit(sha: String(format: "%07x", $0) + "ffffff", subject: "Step \($0)") }
    }

    @Test func aSuccessNamesItsCommitsAtMostTenItsPullRequestAndItsCost() {
        let t = GitHubLoopWork.Task(
            id: 4, state: "succeeded", exitCode: 0, commits: Self.commits(12), cost: "$0.5000",
            pullRequest: "https://github.com/acme/web/pull/7")
        let text = GitHubLoopReport.outcome(t, workspace: "gh-web-12-abcdef", log: "never shown")
        let shown = (1...10).map { "\n- `\(String(format: "%07x", $0))` Step \($0)" }.joined()
        #expect(
            text == "Task 4 in `gh-web-12-abcdef` succeeded.\n\nCommits (12):\n" + shown + "\n- … and 2 more"
                + "\n\nPull request: https://github.com/acme/web/pull/7\n\nCost: $0.5000.")
        let none = GitHubLoopWork.Task(id: 5, state: "cancelled", exitCode: 143)
        #expect(
            GitHubLoopReport.outcome(none, workspace: "w", log: "")
                == "Task 5 in `w` cancelled (exit 143).\n\nNo commit.\n\nCost: not reported by the agent.")
        #expect(
            GitHubLoopReport.reply(t, workspace: "w")
                == "so's task 4 in `w` took this comment and succeeded: 12 commits (`0000001`, `0000002`, "
                + "`0000003`, …); its outcome is on the issue.")
    }

    @Test func aFailuresLogIsItsLastLinesCutScrubbedAndFenced() {
        let long = String(repeating: "x", count: 500)
        let log =
            (1...30).map { "line \($0)" }.joined(separator: "\n") + "\n" + long
            + "\nuse \(GeneratedTokens.github()) and \(GeneratedTokens.anthropic())"
            + "\nAuthorization: Bearer abc.def.ghi-1234\nDB_PASSWORD=hunter2hunter2 API_KEY: k3y-value"
            + "\n\(GeneratedTokens.aws()) \(GeneratedTokens.slack())\n``` closed?\u{1b}[2J\n\n"
        let tail = GitHubLoopReport.tail(log)
        let lines = tail.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 20)
        #expect(lines.first == "line 17" && lines[13] == "line 30")
        #expect(lines[14] == Substring(String(repeating: "x", count: 200) + "…"))
        #expect(lines[15] == "use <secret> and <secret>")
        #expect(lines[16] == "Authorization: Bearer <secret>")
        #expect(lines[17] == "DB_PASSWORD=<secret> API_KEY: <secret>")
        #expect(lines[18] == "<secret> <secret>")
        #expect(lines[19] == "''' closed?[2J")
        #expect(!tail.contains("```") && !tail.contains("\u{1b}"))
        #expect(GitHubLoopReport.tokenShapes.count == 3, "every pattern compiles")
        let t = GitHubLoopWork.Task(id: 2, state: "failed", exitCode: 1)
        #expect(
            GitHubLoopReport.outcome(t, workspace: "w", log: log).hasSuffix(
                "Its log's last lines:\n\n```\n\(tail)\n```"))
    }
}
