import Foundation
import SoBasics
import SoGitHub
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// `--issue OWNER/REPO#N`: comments when a task starts and when it ends, once, whoever sees the end.
@Suite(.serialized) struct TaskIssueCommentTests {
    static func answered(_ n: Int) -> [WebResponse] {
        (0..<n).map { _ in
            WebResponse(status: 201, body: Data(#"{"html_url": "https://github.example/acme/web/issues/42#c"}"#.utf8))
        }
    }

    @Test func anAttachedTaskCommentsOnStartAndEndAndThePullRequestRefersToIt() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        let web = FakeWeb()
        web.answers =
            Self.answered(1) + [
                WebResponse(status: 201, body: Data(#"{"html_url": "https://github.example/acme/web/pull/7"}"#.utf8))
            ] + Self.answered(1)
        g.w.ctx.web = web
        g.w.ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        g.w.ctx.environment["GITHUB_API_URL"] = "http://127.0.0.1:9"
        try await g.originOnGitHub()
        var req = TaskRequest(directory: g.dir, text: "fix the login")
        req.command = "echo fixed > login.ts"
        req.cluster = g.w.clusterOptions
        req.pullRequest = true
        req.issue = "acme/web#42"
        let r = try await TaskAction(g.w.ctx, forge: GitHubTaskForge()).run(req)
        #expect(r.exitCode == 0 && r.pullRequest == "https://github.example/acme/web/pull/7")
        let urls = web.requests.map(\.url)
        #expect(
            urls == [
                "http://127.0.0.1:9/repos/acme/web/issues/42/comments", "http://127.0.0.1:9/repos/acme/web/pulls",
                "http://127.0.0.1:9/repos/acme/web/issues/42/comments",
            ], "\(urls)")
        let bodies = web.requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
        #expect(bodies[0].contains("Task 1 started in workspace `ws`") && bodies[0].contains("> fix the login"))
        #expect(bodies[1].contains("Refers to acme/web#42."), "\(bodies[1])")
        #expect(
            bodies[2].contains("Task 1 in `ws` succeeded: 1 commit on `agent/ws` (pushed).")
                && bodies[2].contains("Pull request: https://github.example/acme/web/pull/7"), "\(bodies[2])")
        #expect(!bodies.joined().contains("test-github-token-not-real"))
        // Its end was commented: a later wait says nothing more. Its report holds the push and the pull request.
        let t = try await TaskQueueAction(g.w.ctx, forge: GitHubTaskForge()).wait(
            g.dir, cluster: g.w.clusterOptions, id: 1, follow: false)
        #expect(web.requests.count == 3)
        #expect(t.pushed == "agent/ws" && t.pullRequest == "https://github.example/acme/web/pull/7", "\(t)")
    }

    @Test func aDetachedTaskThatFailsIsCommentedOnceWithItsLastLines() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        let web = FakeWeb()
        web.answers = Self.answered(2)
        g.w.ctx.web = web
        g.w.ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        var req = TaskRequest(directory: g.dir, text: "break it")
        // An agent that prints a key it was given: the comment must not publish it.
        req.command = "echo 'step one'; echo 'key: test-anthropic-key-not-real'; echo 'it broke' >&2; exit 4"
        req.cluster = g.w.clusterOptions
        req.push = false
        req.issue = "acme/web#42"
        let q = TaskQueueAction(g.w.ctx, forge: GitHubTaskForge())
        let (_, id) = try await q.submit(req)
        await q.commentStarted(req, workspace: "ws", id: id)
        let t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(t.state == "failed" && t.exitCode == 4 && t.issue == "acme/web#42")
        _ = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(web.requests.count == 2, "one start, one end: \(web.requests.map(\.url))")
        let end = String(decoding: web.requests.last?.body ?? Data(), as: UTF8.self)
        #expect(
            end.contains("Task 1 in `ws` failed (exit 4)") && end.contains("step one") && end.contains("it broke"),
            "\(end)")
        #expect(end.contains("key: <secret>") && !end.contains("test-anthropic-key-not-real"), "\(end)")
        #expect(web.requests.last?.url == "https://api.github.com/repos/acme/web/issues/42/comments")
    }

    /// A forge that opens nothing but notes the repository each pull request would be opened on.
    final class NotingForge: TaskForge, @unchecked Sendable {
        let serves: Bool
        private let lock = NSLock()
        private var noted: [String] = []
        init(serves: Bool) { self.serves = serves }
        var origins: [String] { lock.withLock { noted } }
        func check(_ ctx: SoContext) throws {}
        func comment(on issue: String, _ body: String, _ ctx: SoContext) async {}
        func openPullRequest(
            origin: String, head: String, base: String, title: String, body: String, _ ctx: SoContext
        ) async throws -> String {
            lock.withLock { noted.append(origin) }
            return "https://github.example/pull/1"
        }
    }

    /// The GitHub loop opens a task's pull request on the repository it made the workspace from, whatever origin the
    /// checkout names by then (the agent may have changed it to another repository the loop's token reaches).
    @Test func aPullRequestGoesToTheRepositoryTheCallerNamesNotTheCheckoutsOrigin() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        try await g.originOnGitHub()
        var req = TaskRequest(directory: g.dir, text: "add the docs")
        req.command = "echo docs > DOCS.md; git remote set-url origin https://github.com/mallory/other.git"
        req.cluster = g.w.clusterOptions
        req.pullRequest = true
        // Ended with no pull request opened (a forge that does not serve leaves it to one that does).
        let (_, id) = try await TaskQueueAction(g.w.ctx, forge: NotingForge(serves: false)).submit(req)
        let ended = try await TaskQueueAction(g.w.ctx, forge: NotingForge(serves: false)).wait(
            g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(ended.state == "succeeded" && ended.pushed != nil && ended.pullRequest == nil, "\(ended)")
        let forge = NotingForge(serves: true)
        let w = try await WorkspaceContainer.open(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions)
        let t = try await TaskQueueAction(g.w.ctx, forge: forge).finishEnded(
            w, ended, comment: false, repository: "https://github.com/acme/loop.git")
        #expect(forge.origins == ["https://github.com/acme/loop.git"], "\(forge.origins)")
        #expect(t.pullRequest == "https://github.example/pull/1")
    }

    @Test func aDetachedTasksPullRequestIsOpenedOnceByTheFirstWaitThatSeesItSucceed() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        let web = FakeWeb()
        web.answers =
            [
                WebResponse(status: 201, body: Data(#"{"html_url": "https://github.example/acme/web/pull/9"}"#.utf8))
            ] + Self.answered(1)
        g.w.ctx.web = web
        g.w.ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        try await g.originOnGitHub()
        var req = TaskRequest(directory: g.dir, text: "add the docs\nall of them")
        req.command = "echo docs > DOCS.md"
        req.cluster = g.w.clusterOptions
        req.pullRequest = true
        req.issue = "acme/web#5"
        let q = TaskQueueAction(g.w.ctx, forge: GitHubTaskForge())
        let (_, id) = try await q.submit(req)
        let t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(
            t.state == "succeeded" && t.pushed == "agent/ws"
                && t.pullRequest == "https://github.example/acme/web/pull/9")
        let again = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(again.pullRequest == "https://github.example/acme/web/pull/9" && web.requests.count == 2)
        let pr = String(decoding: web.requests.first?.body ?? Data(), as: UTF8.self)
        #expect(
            web.requests.first?.url == "https://api.github.com/repos/acme/web/pulls"
                && pr.contains(#""title":"add the docs""#)
                && pr.contains(#""head":"agent/ws""#) && pr.contains(#""base":"trunk""#)
                && pr.contains("Refers to acme/web#5."),
            "\(pr)")
        let comment = String(decoding: web.requests.last?.body ?? Data(), as: UTF8.self)
        #expect(comment.contains("Pull request: https://github.example/acme/web/pull/9"), "\(comment)")
    }

    @Test func badIssuesAndNoTokenAreRefusedBeforeAnythingRuns() async throws {
        for bad in ["acme/web", "acme#1", "acme/web#0", "acme/web#x", "../web#1", "a/b/c#2"] {
            #expect(GitHubIssue(bad) == nil, "\(bad)")
        }
        #expect(GitHubIssue("acme/web.js#12") == GitHubIssue(owner: "acme", name: "web.js", number: 12))
        let g = try await GitWorkspace()
        try g.podRuns()
        var req = TaskRequest(directory: g.dir, text: "anything")
        req.command = "true"
        req.cluster = g.w.clusterOptions
        req.issue = "acme/web#42"
        let e = await #expect(throws: SoError.self) {
            try await TaskQueueAction(g.w.ctx, forge: GitHubTaskForge()).submit(req)
        }
        #expect(e?.message.contains("GITHUB_TOKEN or GH_TOKEN is not set") == true)
        #expect(!FileManager.default.fileExists(atPath: Path.join(g.checkout, ".git/so/tasks/1")), "nothing queued")
    }
}
