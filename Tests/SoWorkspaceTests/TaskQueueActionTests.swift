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

    /// A task's command that runs until `file` exists (5 minutes at most), looking every 50 ms.
    static func until(_ file: String) -> String {
        "i=0; until [ -e '\(file)' ] || [ $i -ge 6000 ]; do sleep 0.05; i=$((i+1)); done"
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

    /// A real CLI's tool calls (Claude Code's stream-json assistant events) become the task's steps as they come: noted
    /// in its progress while it runs, the last one its step; its other lines give none, and control bytes are dropped.
    @Test func theToolCallsOfAClaudeStreamAreTheTasksSteps() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        // A hostile byte (ESC) in the command: dropped.
        let bash =
            #"{"type":"assistant","message":{"id":"msg_01","role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"npm test -- \"login\"\n\#u{1B}[31m","description":"Run it"}}]},"session_id":"s"}"#
        let rest = [
            #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"FAIL"}]}}"#,
            // Its content names a command, as text: the call's file is what it names.
            #"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_02","name":"Write","input":{"content":"{\"command\":\"rm\"}\n","file_path":"/workspace/login.ts"}}]}}"#,
            #"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"\"type\":\"tool_use\""}]}}"#,
            #"{"type":"result","subtype":"success","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":2}}"#,
        ]
        try g.w.h.tmp.write("bash.jsonl", bash + "\n")
        try g.w.h.tmp.write("rest.jsonl", rest.joined(separator: "\n") + "\n")
        let go = g.w.h.path("go")
        let id = try await submit(
            g, "fix the login",
            "cat '\(g.w.h.path("bash.jsonl"))'; \(Self.until(go)); cat '\(g.w.h.path("rest.jsonl"))'")
        // The first call is a step while the agent still runs.
        var running = TaskRecord(id: id)
        for _ in 0..<600 {
            running = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
            if running.step != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(running.state == "running" && running.step == #"Bash npm test -- "login" [31m"#, "\(running)")
        try g.w.h.tmp.write("go", "")
        let t = try await q.wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(
            t.progress.map(\.text) == [
                "queued", "started", #"→ Bash npm test -- "login" [31m"#, "→ Write /workspace/login.ts",
                "the agent exited with 0", "succeeded",
            ], "\(t.progress)")
        #expect(t.step == "Write /workspace/login.ts" && t.cost.usd == 0.01 && t.state == "succeeded", "\(t)")
    }

    /// aider's usage report in its output (plain text, among its other lines) is the task's cost.
    @Test func aidersUsageReportIsTheTasksCost() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let agent = """
            echo 'Applied edit to hello.txt'
            echo 'Tokens: 2.6k sent, 21 received. Cost: $0.0066 message, $0.0066 session.'
            echo 'Commit 1a2b3c4 add hello.txt'
            """
        let id = try await submit(g, "create hello.txt", agent, push: false)
        let t = try await TaskQueueAction(g.w.ctx).wait(g.dir, cluster: g.w.clusterOptions, id: id, follow: false)
        #expect(t.state == "succeeded" && t.cost.reported && t.cost.usd == 0.0066 && t.cost.outputTokens == 21, "\(t)")
        #expect(t.problems.isEmpty, "\(t.problems)")
    }

    @Test func tasksQueueInOrderAndCancelKeepsWhatWasCommitted() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let q = TaskQueueAction(g.w.ctx)
        // The first runs until it is cancelled (a file nobody writes; 5 minutes at most): a sleep of 30 s ended
        // before the cancel on a machine running every suite at once.
        let first = try await submit(
            g, "first",
            #"echo "first $(date +%s.%N)" >> order.txt; git add -A; git commit -qm first; "#
                + Self.until(g.w.h.path("never")), push: false)
        let second = try await submit(g, "second", #"echo "second" >> order.txt"#, push: false)
        let third = try await submit(g, "third", "echo never", push: false)
        #expect([first, second, third] == [Int](1...3))
        // Queued, not started, while the first runs.
        #expect(try await q.show(g.dir, cluster: g.w.clusterOptions, id: second).state == "queued")
        let gone = try await q.cancel(g.dir, cluster: g.w.clusterOptions, id: third)
        #expect(gone.state == "cancelled" && gone.startedAt == nil, "\(gone)")
        // Wait until the first has committed (a minute at most), then cancel it: its commit stays.
        let checkout = g.w.h.path("container-workspace")
        for _ in 0..<600 {
            let last = try? await GitWorkspace.git(["log", "-1", "--format=%s"], in: checkout).stdout
            if last == "first\n" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
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
        // Running until the test lets it end (a sleep of 8 s ended before two looks on a machine running every suite
        // at once).
        let go = g.w.h.path("go")
        let id = try await submit(g, "slow", Self.until(go), push: false)
        var t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        for _ in 0..<100 where t.state != "running" {
            try await Task.sleep(for: .milliseconds(20))
            t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        }
        let root = "container-workspace/.git/so/tasks"
        try g.w.h.tmp.write("\(root)/.worker/pid", "")
        t = try await q.show(g.dir, cluster: g.w.clusterOptions, id: id)
        #expect(t.state == "running", "\(t.progress)")
        try g.w.h.tmp.write("go", "")
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
        // The first runs until its container stops (a file nobody writes): a sleep of 30 s could end first.
        let first = try await submit(g, "first", Self.until(g.w.h.path("never")), push: false)
        let second = try await submit(g, "second", "echo two > two.txt", push: false)
        let root = Path.join(g.checkout, ".git/so/tasks")
        func read(_ file: String) -> String {
            ((try? String(contentsOfFile: Path.join(root, file), encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // A minute at most (4 s were not enough on a machine running every suite at once).
        for _ in 0..<3000 where read("\(first)/state") != "running" || read("\(first)/pid").isEmpty {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(read("\(first)/state") == "running" && read("\(second)/state") == "queued")
        // The container stops: its worker and the agent (each a session and process group of its own) are gone.
        var killed: [Int32] = []
        for file in [".worker/pid", "\(first)/pid"] {
            if let pid = Int32(read(file).split(separator: " ").first ?? "") {
                kill(-pid, SIGKILL)
                killed.append(pid)
            }
        }
        // Gone before the next container starts, as a container's processes are: a SIGKILL lands when the process is
        // next scheduled, and on a loaded machine the entrypoint's look once found the worker still alive (its task
        // left running) while its next look, a moment later, started a worker for the queue.
        func gone(_ pid: Int32) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        for _ in 0..<500 where !killed.allSatisfy(gone) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(killed.allSatisfy(gone), "the killed worker or agent still runs: \(killed)")
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
        for _ in 0..<3000 where read("\(second)/state") != "succeeded" { try await Task.sleep(for: .milliseconds(20)) }
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
