import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// Detached tasks: the runner (`TaskRunner`) runs for real here, in a local checkout standing in for the
/// workspace's container (`GitWorkspace`), with `setsid` workers that outlive the call that queued them.
@Suite(.serialized) struct WorkspaceTaskQueueTests {
    func submit(_ g: GitWorkspace, _ text: String, _ command: String, push: Bool = true) async throws -> Int {
        var req = TaskRequest(directory: g.dir, text: text)
        req.command = command
        req.push = push
        req.cluster = g.w.clusterOptions
        return try await TaskQueueAction(g.w.ctx).submit(req).id
    }

    @Test func aDetachedTaskRunsOnAndLeavesAReport() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        let claude =
            #"{"type":"result","subtype":"success","total_cost_usd":0.0421,"usage":{"input_tokens":1200,"output_tokens":340,"cache_read_input_tokens":50}}"#
        // The agent: says a step, commits one file, leaves another uncommitted, deletes one, waits for the test to
        // have seen it running (not a sleep: a loaded machine took longer than one), prints its cost.
        let go = g.w.h.path("go")
        let agent = """
            echo "step: reading" > "$SO_TASK_STEP"; echo "working on: $TASK"
            echo fixed > login.ts && git add login.ts && git commit -q -m "fix login"
            echo notes > notes.md; git rm -q README.md
            echo 'running tests' > "$SO_TASK_STEP"; until [ -e '\(go)' ]; do sleep 0.05; done
            echo '\(claude)'
            """
        let id = try await submit(g, "fix the login\nand say so", agent)
        #expect(id == 1)
        // submit returned while the agent still runs: the task is detached from the call.
        let running = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        #expect(running.state == "running" || running.state == "queued", "\(running)")
        try g.w.h.tmp.write("go", "")
        let t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(t.state == "succeeded" && t.exitCode == 0, "\(t)")
        #expect(t.text == "fix the login\nand say so" && t.step == "running tests")
        #expect(t.commits.map(\.subject) == ["fix login", "so task: fix the login"], "\(t.commits)")
        #expect(
            t.files == [
                .init(path: "README.md", change: "deleted"), .init(path: "login.ts", change: "created"),
                .init(path: "notes.md", change: "created"),
            ], "\(t.files)")
        #expect(t.branch == "agent/ws" && t.pushed == "agent/ws")
        #expect(
            t.cost.reported && t.cost.usd == 0.0421 && t.cost.inputTokens == 1200 && t.cost.outputTokens == 340
                && t.cost.cacheReadTokens == 50, "\(t.cost)")
        #expect(t.startedAt != nil && t.endedAt != nil && t.queuedAt != nil && t.problems.isEmpty)
        #expect(t.progress.map(\.text).contains("pushed agent/ws"), "\(t.progress)")
        let pushed = try await GitWorkspace.git(["log", "-1", "--format=%s", "agent/ws"], in: g.origin).stdout
        #expect(pushed == "so task: fix the login\n")
        // The log, read back.
        let out = g.w.h.console
        _ = try await q.logs(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(out.stdout.contains("working on: fix the login"), "\(out.stdout)")
    }

    @Test func tasksQueueInOrderAndCancelKeepsWhatWasCommitted() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        let first = try await submit(
            g, "first", #"echo "first $(date +%s.%N)" >> order.txt; git add -A; git commit -qm first; sleep 30"#,
            push: false)
        let second = try await submit(g, "second", #"echo "second" >> order.txt"#, push: false)
        let third = try await submit(g, "third", "echo never", push: false)
        #expect([first, second, third] == [Int](1...3))
        // Queued, not started, while the first runs.
        #expect(try await q.show(g.dir, cluster: g.w.clusterOptions, id: second).state == "queued")
        let gone = try await q.cancel(g.dir, cluster: g.w.clusterOptions, id: third)
        #expect(gone.state == "cancelled" && gone.startedAt == nil, "\(gone)")
        // Wait until the first has committed, then cancel it: its commit stays.
        for _ in 0..<50 {
            if (try? g.w.h.read("container-workspace/order.txt")) != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = try await q.cancel(g.dir, cluster: g.w.clusterOptions, id: first)
        #expect(cancelled.state == "cancelled" && cancelled.commits.map(\.subject) == ["first"], "\(cancelled)")
        let done = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: second, follow: false)
        #expect(done.state == "succeeded", "\(done)")
        let order = try g.w.h.read("container-workspace/order.txt").split(separator: "\n").map { String($0.prefix(6)) }
        #expect(order == ["first ", "second"], "\(order)")
        let all = try await q.list(g.dir, cluster: g.w.clusterOptions)
        #expect(all.map(\.id) == [1, 2, 3] && all.map(\.state) == ["cancelled", "succeeded", "cancelled"])
        let ended = await #expect(throws: SoError.self) {
            try await q.cancel(g.dir, cluster: g.w.clusterOptions, id: second)
        }
        #expect(ended?.message == "task 2 in ws already ended (succeeded)", "\(String(describing: ended))")
    }

    @Test func badIdsAndBadReportsAreNamedAndNoRecordIsLost() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        let missing = await #expect(throws: SoError.self) {
            try await q.show(g.dir, cluster: g.w.clusterOptions, id: 9)
        }
        #expect(missing?.message == "ws has no task 9", "\(String(describing: missing))")
        let id = try await submit(
            g, "costs", #"echo '{"type":"result","total_cost_usd": 0.5, "usage": {'"#, push: false)
        _ = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        // A report the agent (or anyone) wrote badly.
        let dir = "container-workspace/.git/so/tasks/\(id)"
        try g.w.h.tmp.write("\(dir)/exit", "zero\n")
        try g.w.h.tmp.write("\(dir)/started", "soon\n")
        let t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        #expect(t.state == "succeeded" && t.text == "costs" && t.exitCode == nil && t.startedAt == nil)
        #expect(!t.cost.reported && t.cost.problem == "1 usage line does not parse as JSON", "\(t.cost)")
        let warned = g.w.ctx.diagnostics.all.map(\.message)
        #expect(
            warned.contains("task 1 in ws: its exit code is not a number: zero")
                && warned.contains("task 1 in ws: its 'started' time is not a number: soon")
                && warned.contains("task 1 in ws: its cost: 1 usage line does not parse as JSON"), "\(warned)")
    }

    /// A running task is its runner's (the worker that claimed it, in this pod): a worker lock that names no live
    /// process, as one being rewritten does for an instant, never fails it; a runner that is gone, or another pod's,
    /// does, saying which.
    @Test func aRunningTaskIsFailedOnlyOnceItsRunnerIsGone() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        // 8 s: still running after two looks on a machine running every suite at once.
        let id = try await submit(g, "slow", "sleep 8", push: false)
        var t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        for _ in 0..<100 where t.state != "running" {
            try await Task.sleep(for: .milliseconds(20))
            t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        }
        let root = "container-workspace/.git/so/tasks"
        try g.w.h.tmp.write("\(root)/.worker/pid", "")
        t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        #expect(t.state == "running", "\(t.progress)")
        t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(t.state == "succeeded" && t.exitCode == 0, "\(t.progress)")
        let host = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for (n, runner) in [(7, "999999 12345 \(host)"), (8, "999999 12345 another-pod-5d8f")] {
            for (file, text) in [("text", "left"), ("command", "true"), ("state", "running"), ("runner", runner)] {
                try g.w.h.tmp.write("\(root)/\(n)/\(file)", text + "\n")
            }
        }
        let gone = try await q.show(g.dir, cluster: g.w.clusterOptions, id: 7)
        #expect(
            gone.state == "failed"
                && gone.progress.map(\.text) == ["the workspace's container stopped while the task ran"],
            "\(gone.progress)")
        let moved = try await q.show(g.dir, cluster: g.w.clusterOptions, id: 8)
        #expect(
            moved.state == "failed"
                && moved.progress.map(\.text) == [
                    "the workspace's pod (another-pod-5d8f) was replaced while the task ran"
                ],
            "\(moved.progress)")
    }

    /// A container restart ends the worker and the agent; clone.sh, the entrypoint of the next container, resumes
    /// the queue at once, with no verb of so's: the interrupted task is failed, saying why, and the next one runs.
    @Test func theQueueResumesWhenTheContainerStartsAgain() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        let first = try await submit(g, "first", "sleep 30", push: false)
        let second = try await submit(g, "second", "echo two > two.txt", push: false)
        let root = Path.join(g.checkout, ".git/so/tasks")
        func read(_ file: String) -> String {
            ((try? String(contentsOfFile: Path.join(root, file), encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for _ in 0..<200 where read("\(first)/state") != "running" || read("\(first)/pid").isEmpty {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(read("\(first)/state") == "running" && read("\(second)/state") == "queued")
        // The container stops: its worker and the agent (each a session and process group of its own) are gone.
        for file in [".worker/pid", "\(first)/pid"] {
            if let pid = Int32(read(file).split(separator: " ").first ?? "") { kill(-pid, SIGKILL) }
        }
        // The next container's entrypoint, on the checkout it keeps.
        let t = try TempDir("so-resume-entry")
        defer { t.cleanup() }
        let script = try RepoPaths.cloneScript()
            .replacingOccurrences(of: "/workspace", with: g.checkout).replacingOccurrences(
                of: "/tmp/so-clone-done", with: t.file("done"))
        let entry = try await LocalProcessRunner().run(
            ["sh", "-c", script, "clone.sh", "true"], workingDirectory: nil, environment: GitWorkspace.env, timeout: 60)
        #expect(
            entry.exitCode == 0 && entry.stdout.contains("clone: resuming the task queue"),
            "\(entry.stdout)\(entry.stderr)")
        for _ in 0..<500 where read("\(second)/state") != "succeeded" { try await Task.sleep(for: .milliseconds(20)) }
        #expect(read("\(second)/state") == "succeeded", "\(read("\(second)/progress"))")
        #expect(read("\(first)/state") == "failed")
        #expect(read("\(first)/progress").contains("the workspace's container stopped while the task ran"))
        // What so reports afterwards agrees.
        let done = try await q.show(g.dir, cluster: g.w.clusterOptions, id: second)
        #expect(done.state == "succeeded" && done.commits.count == 1, "\(done)")
    }

    @Test func aWorkspaceWithoutACheckoutSaysSo() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        try FileManager.default.removeItem(atPath: Path.join(g.checkout, ".git"))
        let e = await #expect(throws: SoError.self) {
            try await submit(g, "anything", "true")
        }
        #expect(
            e?.message.hasPrefix("ws cannot run tasks: ") == true
                && e?.message.contains("holds no git checkout") == true)
    }
}

@Suite struct TaskCostTests {
    @Test func claudesResultLineIsTheWholeRun() {
        let lines = """
            {"type":"assistant","message":{"usage":{"input_tokens":5,"output_tokens":1}}}
            {"type":"result","total_cost_usd":0.25,"usage":{"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":7}}
            """
        let c = TaskCost.parse(lines)
        #expect(c.reported && c.usd == 0.25 && c.inputTokens == 100 && c.outputTokens == 20 && c.cacheWriteTokens == 7)
        #expect(c.text == "100 in · 20 out · $0.2500")
    }

    @Test func codexTurnsAreSummedAndHaveNoPrice() {
        let lines = """
            {"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}}
            {"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}
            """
        let c = TaskCost.parse(lines)
        #expect(c.reported && c.usd == nil && c.inputTokens == 15 && c.outputTokens == 5 && c.cacheReadTokens == 4)
    }

    @Test func nothingReportedIsSaidAndNothingInvented() {
        #expect(TaskCost.parse("").text == "not reported by the agent")
        let odd = TaskCost.parse(#"{"usage": "lots"}"#)
        #expect(!odd.reported && odd.problem != nil && odd.usd == nil)
        let t = TaskCost.total([TaskCost.parse(#"{"type":"result","total_cost_usd":1.5}"#), TaskCost(), odd])
        #expect(t.reported && t.usd == 1.5 && t.inputTokens == nil)
    }

    @Test func aReportParsesByLengthWhateverItsText() {
        let text = "line one\n@@ 1 state 6\nfake\n"
        let out = "@@ 4 text \(text.utf8.count)\n\(text)\n@@ 4 state 8\nrunning\n\n@@ 5 state 7\nqueued\n\n"
        let r = TaskRecord.parse(out)
        #expect(r.map(\.id) == [4, 5] && r[0].text == text && r[0].state == "running" && r[1].state == "queued")
    }
}

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
        req.issue = GitHubIssue("acme/web#42")
        let r = try await TaskAction(g.w.ctx).run(req)
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
        let t = try await TaskQueueAction(g.w.ctx).wait(g.dir, cluster: g.w.clusterOptions, id: 1, follow: false)
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
        req.issue = GitHubIssue("acme/web#42")
        let q = TaskQueueAction(g.w.ctx)
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
        req.issue = GitHubIssue("acme/web#5")
        let q = TaskQueueAction(g.w.ctx)
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
        req.issue = GitHubIssue("acme/web#42")
        let e = await #expect(throws: SoError.self) { try await TaskQueueAction(g.w.ctx).submit(req) }
        #expect(e?.message.contains("GITHUB_TOKEN or GH_TOKEN is not set") == true)
        #expect(!FileManager.default.fileExists(atPath: Path.join(g.checkout, ".git/so/tasks/1")), "nothing queued")
    }
}
