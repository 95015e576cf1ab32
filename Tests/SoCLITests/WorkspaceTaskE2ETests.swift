import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// Tasks with a life of their own on a node that runs containers: detached, queued, followed, cancelled,
/// reported with their cost, and going on when the `so` that gave them is killed.
@Suite(
    .serialized,
    RealNode.required
)
struct WorkspaceTaskE2ETests {
    static func json(_ r: ProcessResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func detachedTasksQueueReportTheirCostAndOutliveTheirCaller() async throws {
        let t = try TempDir("so-e2e-tasks")
        defer { t.cleanup() }
        try await AgentE2E.buildImage()
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let (github, api, requests) = try AgentE2E.serveGitHub(in: t)
        defer { AgentE2E.stop(github) }
        let env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": "e2e-github-token-not-real",
            "GITHUB_API_URL": api,
        ]
        let ws = "e2e-tasks"
        func so(_ args: [String]) async throws -> ProcessResult {
            try await E2E.so(["deployment", "--name", ws] + args, cwd: t.path, env: env)
        }
        let claude = ["--command", #"claude -p "$TASK" --output-format json"#]
        try await AgentE2E.removing(ws, t, env) {
            var r = try await E2E.so(
                [
                    "up", stack, "--name", ws, "--config", "GIT_REPO=\(repo)", "--config",
                    "AGENT_IMAGE=\(AgentE2E.image)", "--timeout", "180", "--progress", "plain",
                ], cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")

            // Three tasks given and the caller gone each time: ids at once, the first runs, the others wait.
            var ids: [String] = []
            // The first runs until the test lets it end (a sleep of 25 s ended before three submissions and two reads
            // on a machine running every suite at once).
            for text in ["first held=first", "second", "third (slow)"] {
                let issue = text == "first held=first" ? ["--issue", "acme/app#7"] : text == "second" ? ["--pr"] : []
                r = try await so(["task", "--detach"] + claude + issue + [text])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                ids.append(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(ids == ["1", "2", "3"], "\(ids)")
            r = try await so(["tasks", "-o", "json"])
            let states = (Self.json(r)["tasks"] as? [[String: Any]])?.map { $0["state"] as? String ?? "?" }
            #expect(states == ["running", "queued", "queued"], "\(r.stdout)\n\(r.stderr)")
            r = try await so(["tasks", "show", "1", "-o", "json"])
            #expect(Self.json(r)["step"] as? String == "thinking", "the agent's step: \(r.stdout)")

            r = try await so(["tasks", "cancel", "3"])
            #expect(r.exitCode == 0 && r.stdout.contains("task 3 in \(ws): cancelled"), "\(r.stdout)\n\(r.stderr)")
            try await AgentE2E.release(ws, "first", t, env)
            // Following the first to its end, then waiting for the second (CI's way: the exit code is the task's).
            r = try await so(["tasks", "logs", "1", "-f"])
            #expect(
                r.exitCode == 0 && r.stdout.contains("fake agent: working on: first held=first")
                    && r.stdout.contains("fake agent: committed"), "\(r.stdout)\n\(r.stderr)")
            // The issue heard of the first task's start and end (so comments, once each; the token never shows).
            let comments = try t.read("github-requests.jsonl").split(separator: "\n")
            #expect(
                comments.count == 2
                    && comments.allSatisfy { $0.contains("\"path\": \"/repos/acme/app/issues/7/comments\"") }
                    && comments[0].contains("Task 1 started in workspace")
                    && comments[1].contains("Task 1 in `\(ws)` succeeded"),
                "\(comments)")
            _ = requests
            r = try await so(["tasks", "wait", "2"])
            #expect(r.exitCode == 0 && r.stdout.contains("task 2 in \(ws) succeeded"), "\(r.stdout)\n\(r.stderr)")

            r = try await so(["tasks", "show", "2", "-o", "json"])
            let second = Self.json(r)
            let cost = second["cost"] as? [String: Any] ?? [:]
            #expect(
                second["state"] as? String == "succeeded" && second["exitCode"] as? Int == 0
                    && second["pushed"] as? String == "agent/\(ws)", "\(r.stdout)\n\(r.stderr)")
            #expect(
                (second["commits"] as? [[String: Any]])?.map { $0["subject"] as? String } == ["agent: second"]
                    && (second["files"] as? [[String: Any]])?.first?["path"] as? String == "AGENT_TASKS.md",
                "\(r.stdout)")
            // Its pull request, opened by the wait that saw it succeed.
            #expect(second["pullRequest"] as? String == "http://github.test/acme/app/pull/1", "\(r.stdout)")
            #expect(try t.read("github-requests.jsonl").contains("\"path\": \"/repos/acme/app/pulls\""))
            #expect(
                cost["usd"] as? String == "0.0123" && cost["inputTokens"] as? Int == 1000
                    && cost["outputTokens"] as? Int == 200, "\(cost)")
            #expect(
                try await AgentE2E.run([
                    "git", "--git-dir", t.file("srv/acme/app.git"), "log", "-1", "--format=%s", "agent/\(ws)",
                ]).stdout == "agent: second\n", "the worker pushed the branch")
            r = try await so(["tasks"])
            #expect(
                r.exitCode == 0 && r.stdout.contains("cancelled")
                    && r.stdout.contains("total cost: 2000 in · 400 out · $0.0246"),
                "\(r.stdout)\n\(r.stderr)")

            // A task given in the foreground whose so is killed goes on, and its report is read back.
            let p = Process()
            p.executableURL = URL(fileURLWithPath: E2E.binary)
            p.arguments = ["deployment", "--name", ws, "task", "--no-push"] + claude + ["fourth held=fourth"]
            var penv = ProcessInfo.processInfo.environment
            penv["SO_ROOT"] = RepoPaths.root
            for (k, v) in env { penv[k] = v }
            p.environment = penv
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            var started = false
            for _ in 0..<60 where !started {
                try await Task.sleep(for: .milliseconds(500))
                r = try await so(["tasks", "show", "4", "-o", "json"])
                started = Self.json(r)["state"] as? String == "running"
            }
            #expect(started, "\(r.stdout)\n\(r.stderr)")
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            try await AgentE2E.release(ws, "fourth", t, env)
            r = try await so(["tasks", "wait", "4", "-o", "json"])
            #expect(
                r.exitCode == 0 && Self.json(r)["state"] as? String == "succeeded"
                    && (Self.json(r)["commits"] as? [[String: Any]])?.count == 1, "\(r.stdout)\n\(r.stderr)")

            // A running task cancelled keeps what it committed; unknown ids are named.
            r = try await so([
                // Runs on (5 minutes at most) until cancelled: a sleep of 60 s ended before the cancel under load.
                "task", "--detach", "--command",
                #"echo one > one.txt; git add one.txt; git commit -qm one; i=0; until [ $i -ge 3000 ]; do sleep 0.1; i=$((i+1)); done"#,
                "cancel me",
            ])
            #expect(r.exitCode == 0 && r.stdout.hasPrefix("5"), "\(r.stdout)\n\(r.stderr)")
            // Cancelled once its commit is there (a minute at most; a fixed 2 s was not always enough under load).
            for _ in 0..<120 {
                r = try await so(["exec", "agent", "--", "git", "-C", "/workspace", "log", "-1", "--format=%s"])
                if r.stdout == "one\n" { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            r = try await so(["tasks", "cancel", "5", "-o", "json"])
            #expect(
                Self.json(r)["state"] as? String == "cancelled"
                    && (Self.json(r)["commits"] as? [[String: Any]])?.map { $0["subject"] as? String } == ["one"],
                "\(r.stdout)\n\(r.stderr)")
            r = try await so(["tasks", "show", "9"])
            #expect(r.exitCode == 1 && r.stderr.contains("\(ws) has no task 9"), "\(r.stdout)\n\(r.stderr)")
            // No process the tasks left behind: no worker, no zombie. A `report` is a reader's (a dashboard in
            // another suite reads every workspace's tasks), not the tasks'. An exec'd process (a report, a probe) has
            // its parent outside the container (ppid 0) and is reaped there: one that just ended was seen in CI as
            // "Zs [sh] <defunct>" (a zombie has no arguments to tell it by). A zombie of the container's own (ppid
            // not 0) that is still there after three looks a second apart is one nobody reaps.
            r = try await so([
                "exec", "agent", "--", "sh", "-c",
                """
                left() { ps -eo pid=,ppid=,stat=,args= | awk '($3 ~ /^Z/ && $2 != 0) || /task[.]s[h]/' \
                  | grep -v 'task[.]sh report '; }
                for i in 1 2 3; do l=$(left); [ -z "$l" ] && break; sleep 1; done; printf '%s' "$l"
                """,
            ])
            #expect(r.exitCode == 0 && r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(r.stdout)")

            // The container restarts while a task runs and another waits: its entrypoint resumes the queue, with
            // no so verb that runs tasks (only exec reads their files): the interrupted one failed, the next run.
            r = try await so(["task", "--detach", "--no-push", "--command", "sleep 120", "interrupted"])
            #expect(r.stdout.hasPrefix("6"), "\(r.stdout)\n\(r.stderr)")
            r = try await so([
                "task", "--detach", "--no-push", "--command", "echo after > after.txt", "after the restart",
            ])
            #expect(r.stdout.hasPrefix("7"), "\(r.stdout)\n\(r.stderr)")
            func state(_ id: Int) async throws -> String {
                try await so(["exec", "agent", "--", "cat", "/workspace/.git/so/tasks/\(id)/state"]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var first = ""
            for _ in 0..<60 where first != "running" {
                first = try await state(6)
                if first != "running" { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(first == "running", "task 6 before the restart: \(first)")
            _ = try await so(["exec", "agent", "--", "kill", "1"])
            var resumed = ""
            for _ in 0..<60 where resumed != "succeeded" {
                try await Task.sleep(for: .seconds(1))
                resumed = (try? await state(7)) ?? ""
            }
            #expect(resumed == "succeeded", "task 7 after the container restarted: \(resumed)")
            #expect(try await state(6) == "failed")
            // The kubelet reports the restart at its next look at the runtime (about a second), which can come after
            // the resumed queue has already run task 7.
            var restarts = ""
            for look in 0..<20 where !restarts.split(separator: " ").contains(where: { Int($0) ?? 0 >= 1 }) {
                if look > 0 { try await Task.sleep(for: .milliseconds(500)) }
                restarts = try await E2E.kubectl([
                    "-n", ws, "get", "pods", "-o",
                    "jsonpath={.items[*].status.containerStatuses[?(@.name==\"agent\")].restartCount}",
                ]).stdout
            }
            #expect(restarts.split(separator: " ").contains { Int($0) ?? 0 >= 1 }, "restart counts: \(restarts)")

            r = try await E2E.so(["down", ws, "--discard"], cwd: t.path, env: env)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        }
    }

    /// A workspace with `idle:` is stopped by `cleanup --idle` once nobody uses it (not while a task runs or an
    /// exec is open in it), keeps its volume, and the next verb that needs it starts it again.
    @Test func anIdleWorkspaceIsStoppedAndWokenByTheNextVerb() async throws {
        let t = try TempDir("so-e2e-idle")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        let ws = "e2e-idle"
        func so(_ args: [String]) async throws -> ProcessResult {
            try await E2E.so(args, cwd: t.path, env: env)
        }
        func deployments() async throws -> String {
            try await E2E.kubectl(["-n", ws, "get", "deployments", "-o", "name"]).stdout
        }
        try await IdleCleanupTurn.exclusive {
            try await AgentE2E.removing(ws, t, env) {
                var r = try await so([
                    "up", stack, "--name", ws, "--config", "GIT_REPO=\(repo)", "--idle", "3s", "--timeout",
                    "180",
                    "--progress", "plain",
                ])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                r = try await so([
                    "deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", "echo kept > /workspace/mine.txt",
                ])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")

                // Busy with a task: kept. The task and the exec below run until the test lets them end (a task of 8 s
                // and an exec of 12 s had ended before the cleanup looked, on a machine running every suite at once).
                func until(_ file: String) -> String {
                    "i=0; until [ -e /tmp/\(file) ] || [ $i -ge 3000 ]; do sleep 0.1; i=$((i+1)); done"
                }
                func release(_ file: String) async throws {
                    let r = try await so(["deployment", "--name", ws, "exec", "agent", "--", "touch", "/tmp/\(file)"])
                    #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                }
                r = try await so([
                    "deployment", "--name", ws, "task", "--detach", "--no-push", "--command", until("so-e2e-task"),
                    "wait a bit",
                ])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                try await Task.sleep(for: .seconds(4))
                r = try await so(["cleanup", "--idle"])
                #expect(
                    r.exitCode == 0 && r.stdout.contains("keeping \(ws) (namespace \(ws)): task 1 is running"),
                    "\(r.stdout)\n\(r.stderr)")
                try await release("so-e2e-task")
                r = try await so(["deployment", "--name", ws, "tasks", "wait", "1"])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")

                // An exec open in it: kept.
                let open = Process()
                open.executableURL = URL(fileURLWithPath: E2E.binary)
                open.arguments = ["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", until("so-e2e-exec")]
                var penv = ProcessInfo.processInfo.environment
                for (k, v) in env { penv[k] = v }
                open.environment = penv
                open.standardOutput = FileHandle.nullDevice
                open.standardError = FileHandle.nullDevice
                try open.run()
                // Once the exec runs in the container (a minute at most), and the workspace is past its 3 s of idle.
                for _ in 0..<120 {
                    r = try await so([
                        "deployment", "--name", ws, "exec", "agent", "--", "sh", "-c",
                        "ps -eo args= | grep -c '[s]o-e2e-exec' || true",
                    ])
                    if r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != "0" { break }
                    try await Task.sleep(for: .milliseconds(500))
                }
                try await Task.sleep(for: .seconds(4))
                r = try await so(["cleanup", "--idle"])
                #expect(
                    r.exitCode == 0 && r.stdout.contains("keeping \(ws)")
                        && r.stdout.contains("a shell or exec is open"),
                    "\(r.stdout)\n\(r.stderr)")
                try await release("so-e2e-exec")
                open.waitUntilExit()

                // Nobody: stopped, the volume kept, listed as idle.
                try await Task.sleep(for: .seconds(4))
                r = try await so(["cleanup", "--idle"])
                #expect(
                    r.exitCode == 0 && r.stdout.contains("stopping \(ws) (namespace \(ws), unused for"),
                    "\(r.stdout)\n\(r.stderr)")
                #expect(try await deployments().isEmpty)
                #expect(
                    try await E2E.kubectl(["-n", ws, "get", "pvc", "-o", "name"]).stdout.contains(
                        "persistentvolumeclaim/"))
                r = try await so(["deployment", "list"])
                #expect(
                    r.stdout.split(separator: "\n").contains { $0.hasPrefix(ws) && $0.contains(" idle ") },
                    "\(r.stdout)")

                // The next verb that needs the container starts it again, and the checkout is as it was.
                r = try await so(["deployment", "--name", ws, "exec", "agent", "--", "cat", "/workspace/mine.txt"])
                #expect(
                    r.exitCode == 0 && r.stdout.contains("\(ws) was stopped for being idle")
                        && r.stdout.hasSuffix("kept\n"), "\(r.stdout)\n\(r.stderr)")
                #expect(try await !deployments().isEmpty)
                r = try await so(["down", ws, "--discard"])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            }
        }
    }
}
