import Foundation
import SoBasics
import SoGitHub
import SoSystem
import SoTestSupport
import Testing

/// The GitHub loop end to end on a node that runs containers (issue 52, item 6), against a stand-in GitHub that is a
/// real HTTP server on this machine (`GitHubStandIn/standin.py`: GitHub's headers, signatures and example payloads;
/// the REST calls `so` makes, recorded) and a bare repository served by `git daemon` on the node's address, which the
/// workspace pushes to. The receiver is `so dashboard --github-repo`, the loop `so github loop`, the agent the task
/// e2e's stand-in `claude` (it commits each task's text to AGENT_TASKS.md).
///
/// The walk: an issue labeled → a workspace and its task → a pull request of the agent's commit → a review asking for
/// changes (its body, and two inline comments) → a second commit on the same branch and pull request → an outsider's
/// `/so` gets one reply and no task → a delivery sent twice runs once → the loop and the receiver killed while a task
/// runs, a delivery made while the receiver was down redelivered, both restarted: nothing lost → the pull request
/// closed → the workspace's namespace gone. The repository's owner is unique to the run (`e2e-gh-HEX/app`), so its
/// inbox entries, thread and workspace are this test's alone.
@Suite(.serialized, RealNode.required)
struct GitHubLoopE2ETests {
    static let token = "e2e-github-token-not-real"
    static let secret = "e2e-loop-secret-" + String(repeating: "6b", count: 16)

    /// What one run holds: its temp dir, names, the stand-in, the receiver and the environment `so` runs with.
    final class Run: @unchecked Sendable {
        let t: TempDir
        let owner = "e2e-gh-" + String(UUID().uuidString.lowercased().prefix(6))
        var repo: String { "\(owner)/app" }
        var github: GitHubStandInServer!
        var receiver: Process?
        var loop: Process?
        var env: [String: String] = [:]
        var workspace = ""
        init(_ t: TempDir) { self.t = t }

        var bare: String { t.file("srv/\(repo).git") }

        /// The loop's file: this run's repository, `stack`, the bare repository's clone, the test image, a bot's
        /// identity and `budget` (its keys' lines, indented after the first); `extra`, more keys' lines.
        func loopFile(stack: String, gitURL: String, budget: String, extra: String = "") -> String {
            """
            \(extra)repositories: [\(repo)]
            label: so
            prefix: /so
            stack: \(stack)
            config:
              - GIT_REPO=\(gitURL)
              - AGENT_IMAGE=\(AgentE2E.image)
              - GIT_USER_NAME=so-bot
              - GIT_USER_EMAIL=so-bot@e2e.invalid
            budget:
              \(budget)

            """
        }
        var inboxLabel: String { "so.dev/github-repo=" + repo.lowercased().replacingOccurrences(of: "/", with: "_") }

        func so(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: env) }

        /// `so dashboard` taking the webhook on a free port (`bound`: its `--github-inbox-bound`); the stand-in
        /// pointed at it.
        func startReceiver(bound: Int? = nil) async throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: E2E.binary)
            p.arguments =
                [
                    "dashboard", "--port", "0", "--read-only", "--github-secret-file", t.file("secret"),
                    "--github-repo", repo,
                ] + (bound.map { ["--github-inbox-bound", String($0)] } ?? [])
            p.currentDirectoryURL = URL(fileURLWithPath: t.path)
            var environment = ProcessInfo.processInfo.environment
            for (k, v) in env { environment[k] = v }
            p.environment = environment
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.standardError
            try p.run()
            receiver = p
            let url = try Browser.firstURL(out)
            // Its later lines (one per delivery) are read by nobody: drained so the pipe never fills.
            out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            guard let port = url.split(separator: "/").dropFirst().first?.split(separator: ":").last else {
                throw SoError("no port in \(url)")
            }
            try await github.call("hook", ["url": "http://127.0.0.1:\(port)/github/webhook"])
        }

        /// `so github loop` making a pass every second, its lines in `loop-N.log`, until killed.
        func startLoop(_ n: Int) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: E2E.binary)
            p.arguments = ["github", "loop", "--config", t.file("loop.yml"), "--interval", "1"]
            p.currentDirectoryURL = URL(fileURLWithPath: t.path)
            var environment = ProcessInfo.processInfo.environment
            environment["SO_ROOT"] = RepoPaths.root
            for (k, v) in env { environment[k] = v }
            p.environment = environment
            _ = FileManager.default.createFile(atPath: t.file("loop-\(n).log"), contents: nil)
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: t.file("loop-\(n).log")))
            p.standardError = FileHandle.standardError
            try p.run()
            loop = p
        }

        func kill9(_ p: Process?) {
            guard let p, p.isRunning else { return }
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }

        /// `so github inbox -o json`, this run's entries only.
        func inbox() async throws -> [[String: Any]] {
            let r = try await so(["github", "inbox", "-o", "json"])
            let all = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
            return all.filter { ($0["repository"] as? String)?.lowercased() == repo.lowercased() }
        }

        func state(of delivery: String) async throws -> [String] {
            try await inbox().filter { $0["delivery"] as? String == delivery }.map { $0["state"] as? String ?? "?" }
        }

        /// One `so github loop --once` pass: its stdout.
        func pass() async throws -> String {
            let r = try await so(["github", "loop", "--config", t.file("loop.yml"), "--once"])
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            print("github loop e2e: pass:\n\(r.stdout)", terminator: "")
            return r.stdout
        }

        /// Passes (2 s apart, 5 minutes at most) until one says `text`; all they said.
        func passes(until text: String) async throws -> String {
            var said = ""
            for i in 0..<150 {
                if i > 0 { try await Task.sleep(for: .seconds(2)) }
                said += try await pass()
                if said.contains(text) { return said }
            }
            Issue.record("no pass said \(text): \(said)")
            return said
        }

        /// The subjects of the commits on the workspace's branch in the bare repository, oldest first.
        func subjects() async throws -> [String] {
            let r = try await AgentE2E.run([
                "git", "--git-dir", bare, "log", "--reverse", "--format=%s", "trunk..agent/\(workspace)",
            ])
            return r.stdout.split(separator: "\n").map(String.init)
        }

        func file(_ path: String) async throws -> String {
            try await AgentE2E.run(["git", "--git-dir", bare, "show", "agent/\(workspace):\(path)"]).stdout
        }

        /// The workspace's tasks, from `so deployment tasks -o json`: their states.
        func tasks() async throws -> [String] {
            let r = try await so(["deployment", "--name", workspace, "tasks", "-o", "json"])
            let obj = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            return (obj?["tasks"] as? [[String: Any]] ?? []).map { $0["state"] as? String ?? "?" }
        }

        /// An issue labeled `so`: its number, the delivery, and the pull requests once one is open (5 minutes at most).
        func labelUntilPullRequest() async throws -> (issue: Int, sent: [GitHubStandInServer.Sent], [[String: Any]]) {
            let (answer, sent) = try await github.send(
                "label", ["title": "Add a greeting", "body": "Say hello in AGENT_TASKS.md.", "label": "so"])
            #expect(sent.map(\.status) == [202], "\(sent)")
            var pulls: [[String: Any]] = []
            for _ in 0..<150 where pulls.isEmpty {
                try await Task.sleep(for: .seconds(2))
                pulls = try await github.pulls()
            }
            return (answer["number"] as? Int ?? 0, sent, pulls)
        }

        /// The workspace a loop's `lines` name for `issue`.
        func workspace(in lines: String, issue: Int) -> String {
            lines.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("gh-app-\(issue)-") }
                .map(String.init) ?? ""
        }

        /// Whether the workspace's namespace is gone, or goes within 5 minutes.
        func namespaceGone() async throws -> Bool {
            for _ in 0..<150 {
                if try await E2E.kubectl(["get", "namespace", workspace]).exitCode != 0 { return true }
                try await Task.sleep(for: .seconds(2))
            }
            return false
        }

        func cleanUp() async {
            kill9(loop)
            kill9(receiver)
            if let github { AgentE2E.stop(github.process) }
            if !workspace.isEmpty {
                _ = try? await E2E.so(["down", workspace, "--discard"], cwd: t.path, env: env)
                _ = try? await E2E.kubectl([
                    "-n", "so-github", "delete", "configmap", "so.github.thread.\(workspace)", "--ignore-not-found",
                ])
            }
            _ = try? await E2E.kubectl(["-n", "so-github", "delete", "secrets", "-l", inboxLabel])
        }
    }

    @Test func anIssueBecomesAPullRequestAndAReviewItsNextCommitUntilItCloses() async throws {
        try await Self.walk("so-e2e-github-loop") { run in
            let (issue, pull) = try await Self.labelToPullRequest(run)
            try await Self.reviewToSecondCommit(run, issue: issue, pull: pull)
            try await Self.hostileRecord(run, issue: issue)
            try await Self.outsiderAndRedelivery(run, pull: pull)
            try await Self.killedMidTaskAndClosed(run, issue: issue, pull: pull)
        }
    }

    /// A run of the loop by passes (`so github loop --once`): the test image, the light stack, the bare repository
    /// served by `git daemon`, the stand-in GitHub on loopback, the loop's file (`extra`: more keys) and the
    /// receiver, then `body`; all it made removed after, whether it passed or threw.
    static func walk(_ name: String, extra: String = "", _ body: (Run) async throws -> Void) async throws {
        let t = try TempDir(name)
        defer { t.cleanup() }
        let run = Run(t)
        try await AgentE2E.buildImage()
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, gitURL) = try await AgentE2E.serveRepository(in: t, path: run.repo)
        defer { AgentE2E.stop(daemon) }
        try t.write("secret", Self.secret + "\n")
        try t.write(
            "loop.yml", run.loopFile(stack: stack, gitURL: gitURL, budget: "tasks: 10\n  workspaces: 2", extra: extra))
        run.github = try GitHubStandInServer.start(
            in: t, repo: run.repo, gitDir: run.bare, token: Self.token, secretFile: t.file("secret"))
        run.env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": Self.token,
            "GITHUB_API_URL": run.github.url,
        ]
        do {
            try await run.startReceiver()
            try await body(run)
        } catch {
            await run.cleanUp()
            throw error
        }
        await run.cleanUp()
    }

    /// An issue labeled `so`: the receiver keeps it pending, a pass makes the workspace and its task, and the pass
    /// that sees the task end opens the pull request of the agent's commit, pushed to the bare repository.
    static func labelToPullRequest(_ run: Run) async throws -> (issue: Int, pull: Int) {
        let began = Date()
        let (answer, sent) = try await run.github.send(
            "label", ["title": "Add a greeting", "body": "Say hello in AGENT_TASKS.md.", "label": "so"])
        let issue = answer["number"] as? Int ?? 0
        #expect(sent.map(\.status) == [202] && sent.map(\.event) == ["issues"], "\(sent)")
        let entry = try await run.inbox().first { $0["delivery"] as? String == sent.first?.delivery }
        #expect(
            entry?["state"] as? String == "pending" && entry?["event"] as? String == "issues"
                && entry?["action"] as? String == "labeled" && entry?["number"] as? Int == issue,
            "\(String(describing: entry))")

        let said = try await run.pass()
        let name = said.split(separator: " ").first { $0.hasPrefix("gh-app-\(issue)-") }.map(String.init) ?? ""
        #expect(
            said.contains("github: \(run.repo)#\(issue): start \(name) (delivery \(sent.first?.delivery ?? "?"))")
                && name.count == "gh-app-\(issue)-".count + 6, "\(said)")
        run.workspace = name
        // Issue 64: the workspace holds no GitHub token at all (the loop pushes its work).
        #expect(try await Self.secretKeys(workspace: name).isDisjoint(with: ["GITHUB_TOKEN", "GH_TOKEN", "GIT_TOKEN"]))
        #expect(try await run.state(of: sent.first?.delivery ?? "") == ["done"])
        _ = try await run.passes(until: "\(name) is idle, its task ended")

        // The pull request: the agent's commit on the workspace's branch, pushed to the bare repository by the loop,
        // from the copy it took out of the workspace as a bundle.
        #expect(FileManager.default.fileExists(atPath: run.t.file("home/github-push/\(name)/HEAD")), "the loop's copy")
        #expect(try await run.subjects() == ["agent: Add a greeting"])
        #expect(try await run.file("AGENT_TASKS.md") == "Add a greeting\n\nSay hello in AGENT_TASKS.md.\n")
        let pulls = try await run.github.pulls()
        let head = pulls.first?["head"] as? [String: Any]
        let sha = try await AgentE2E.run(["git", "--git-dir", run.bare, "rev-parse", "agent/\(name)"]).stdout
        #expect(
            pulls.count == 1 && head?["ref"] as? String == "agent/\(name)"
                && (pulls.first?["base"] as? [String: Any])?["ref"] as? String == "trunk"
                && head?["sha"] as? String == sha.trimmingCharacters(in: .whitespacesAndNewlines), "\(pulls)")
        let pull = pulls.first?["number"] as? Int ?? 0
        print("github loop e2e: label to pull request in \(String(format: "%.1f", Date().timeIntervalSince(began))) s")
        let requests = try run.github.requests()
        #expect(
            requests.contains {
                $0["path"] as? String == "/repos/\(run.repo)/issues/\(issue)/reactions"
                    && ($0["body"] as? [String: Any])?["content"] as? String == "eyes" && $0["status"] as? Int == 201
            }, "👀 on the issue: \(requests)")
        // The REST calls (the git endpoint's requests, when it serves the repository, carry a password of their own).
        #expect(
            requests.filter { $0["git"] == nil }.allSatisfy {
                $0["auth"] as? String == "Bearer \(token)" && $0["status"] as? Int != 404
            })
        let comments = try run.github.comments(on: issue, repo: run.repo)
        #expect(
            comments.count == 2 && comments[0].contains("so made the workspace `\(name)` for this issue")
                && comments[1].contains("Task 1 in `\(name)` succeeded")
                && comments[1].contains("https://github.com/\(run.repo)/pull/\(pull)"), "\(comments)")
        return (issue, pull)
    }

    /// A review asking for changes, with two inline comments: one task on the same workspace, its commit on the same
    /// branch and pull request (the task asks for none: its thread has one).
    static func reviewToSecondCommit(_ run: Run, issue: Int, pull: Int) async throws {
        let (_, sent) = try await run.github.send(
            "review",
            [
                "number": pull, "state": "changes_requested", "body": "Please also say goodbye.",
                "comments": [
                    ["path": "AGENT_TASKS.md", "line": 1, "body": "Capitalise the greeting."],
                    ["path": "AGENT_TASKS.md", "line": 3, "body": "End with a full stop."],
                ],
            ])
        #expect(
            sent.map(\.event) == ["pull_request_review", "pull_request_review_comment", "pull_request_review_comment"]
                && sent.allSatisfy { $0.status == 202 }, "\(sent)")
        // The review and its two inline comments: one task, of all three deliveries.
        let said = try await run.pass()
        let line = said.split(separator: "\n").first { $0.contains("task \(run.workspace) (deliveries ") } ?? ""
        #expect(sent.allSatisfy { line.contains($0.delivery) }, "\(said)")
        _ = try await run.passes(until: "\(run.workspace) is idle, its task ended")
        let subjects = try await run.subjects()
        #expect(
            subjects.count == 2 && subjects.first == "agent: Add a greeting"
                && subjects.last?.hasPrefix("agent: Changes requested by @\(run.owner) in a review") == true,
            "\(subjects)")
        // The task's text: the review's body, then each inline comment with its file and line.
        let tasks = try await run.file("AGENT_TASKS.md")
        #expect(
            tasks.contains("Please also say goodbye.") && tasks.contains("AGENT_TASKS.md:1")
                && tasks.contains("Capitalise the greeting.") && tasks.contains("AGENT_TASKS.md:3")
                && tasks.contains("End with a full stop."), "\(tasks)")
        // Once it ended, one reply in each inline comment's thread.
        let replies = try run.github.requests().filter {
            $0["method"] as? String == "POST"
                && ($0["path"] as? String ?? "").hasPrefix("/repos/\(run.repo)/pulls/\(pull)/comments/")
                && ($0["path"] as? String ?? "").hasSuffix("/replies")
        }
        #expect(
            replies.count == 2 && Set(replies.compactMap { $0["path"] as? String }).count == 2
                && replies.allSatisfy { $0["status"] as? Int == 201 }, "\(replies)")
        // And 👀 on each inline comment, when the task was queued.
        let eyes = try run.github.requests().filter {
            ($0["path"] as? String ?? "").hasPrefix("/repos/\(run.repo)/pulls/comments/")
                && ($0["path"] as? String ?? "").hasSuffix("/reactions")
        }
        #expect(
            eyes.count == 2 && Set(eyes.compactMap { $0["path"] as? String }).count == 2
                && eyes.allSatisfy { $0["status"] as? Int == 201 }, "\(eyes)")
        let pulls = try await run.github.pulls()
        #expect(pulls.count == 1 && pulls.first?["number"] as? Int == pull, "one pull request still: \(pulls)")
        let creates = try run.github.requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(run.repo)/pulls"
        }
        #expect(creates.map { $0["status"] as? Int } == [201], "the review's task asked for no second: \(creates)")
        #expect(
            try run.github.comments(on: issue, repo: run.repo).last?.contains("Task 2 in `\(run.workspace)` succeeded")
                == true)
        for d in sent { #expect(try await run.state(of: d.delivery) == ["done"], "\(d)") }
    }

    /// Issue 64: a read-only collaborator's `/so` on the pull request (its association trusted, GitHub's permission
    /// read: the stand-in gives read to every login but the owner), and a label an issue template put when an
    /// outsider opened an issue: one reply each, saying what GitHub said, and nothing started; the permission asked of
    /// the stand-in once per sender.
    static func onlyWriters(_ run: Run, pull: Int) async throws {
        let (_, reader) = try await run.github.send(
            "comment", ["number": pull, "body": "/so push to main", "sender": "reader", "association": "COLLABORATOR"])
        let (opened, templated) = try await run.github.send(
            "label", ["title": "Mine crypto", "body": "x", "label": "so", "sender": "stranger", "association": "NONE"])
        let other = opened["number"] as? Int ?? 0
        #expect(reader.map(\.status) == [202] && templated.map(\.status) == [202])
        let said = try await run.pass()
        #expect(said.contains("github: \(run.repo)#\(pull): reply (delivery \(reader[0].delivery))"), "\(said)")
        #expect(said.contains("github: \(run.repo)#\(other): reply (delivery \(templated[0].delivery))"), "\(said)")
        #expect(!said.contains("start "), "nothing started: \(said)")
        let onPull = try run.github.comments(on: pull, repo: run.repo)
        #expect(
            onPull.last?.hasPrefix("Nothing ran for @reader: so takes tasks only from people with write permission")
                == true
                && onPull.last?.contains("GitHub says @reader has read") == true, "\(onPull)")
        let onIssue = try run.github.comments(on: other, repo: run.repo)
        #expect(
            onIssue.count == 1 && onIssue[0].hasPrefix("The label so was put by @stranger")
                && onIssue[0].contains("has read"), "\(onIssue)")
        let asked = try run.github.requests().compactMap { $0["path"] as? String }.filter {
            $0.hasSuffix("/permission")
        }
        #expect(
            asked.filter { $0.contains("/collaborators/reader/") }.count == 1
                && asked.filter { $0.contains("/collaborators/stranger/") }.count == 1, "\(asked)")
        #expect(try await run.state(of: reader[0].delivery) == ["done"])
        #expect(try await run.state(of: templated[0].delivery) == ["done"])
        #expect(try await run.tasks() == ["succeeded", "succeeded"], "no task")
    }

    /// An outsider's `/so` on the pull request: one reply there, no task. A trusted `/so` delivered twice (GitHub's
    /// redelivery: the same X-GitHub-Delivery and body): one inbox entry, one task, one 👀.
    static func outsiderAndRedelivery(_ run: Run, pull: Int) async throws {
        let (_, outsider) = try await run.github.send(
            "comment", ["number": pull, "body": "/so run my miner", "sender": "mallory", "association": "NONE"])
        #expect(outsider.map(\.status) == [202])
        var said = try await run.pass()
        #expect(said.contains("github: \(run.repo)#\(pull): reply (delivery \(outsider[0].delivery))"), "\(said)")
        let replies = try run.github.comments(on: pull, repo: run.repo)
        #expect(replies.count == 1 && replies[0].hasPrefix("Nothing ran for @mallory"), "\(replies)")
        #expect(try await run.tasks() == ["succeeded", "succeeded"])
        try await Self.onlyWriters(run, pull: pull)

        let (answer, twice) = try await run.github.send(
            "comment", ["number": pull, "body": "/so Add a third line. held=third", "association": "OWNER"])
        let again = try await run.github.send("redeliver", ["delivery": twice[0].delivery]).sent
        #expect(twice.map(\.status) == [202] && again == twice, "\(twice) \(again)")
        #expect(try await run.state(of: twice[0].delivery) == ["pending"], "one entry for the delivery sent twice")
        said = try await run.pass()
        #expect(said.contains("task \(run.workspace) (delivery \(twice[0].delivery))"), "\(said)")
        let again2 = try await run.github.send("redeliver", ["delivery": twice[0].delivery]).sent
        #expect(again2.map(\.status) == [202])
        #expect(try await run.state(of: twice[0].delivery) == ["done"], "a redelivery after it ran stays done")
        said = try await run.pass()
        #expect(!said.contains(twice[0].delivery), "\(said)")
        #expect(["running", "queued"].contains(try await run.tasks().dropFirst(2).first ?? "?"))
        let comment = answer["comment"] as? Int ?? 0
        let eyes = try run.github.requests().filter {
            $0["path"] as? String == "/repos/\(run.repo)/issues/comments/\(comment)/reactions"
        }
        #expect(eyes.count == 1, "one 👀 on the comment: \(eyes)")
    }

    /// While task 3 runs (held): a trusted comment waits in the inbox (the loop, running every second, says so); the
    /// loop and the receiver are killed; a comment GitHub could not deliver meanwhile is redelivered once the receiver
    /// is back; the loop restarted runs both after task 3, as one task (4). The pull request closed then: the
    /// workspace goes.
    static func killedMidTaskAndClosed(_ run: Run, issue: Int, pull: Int) async throws {
        let (_, waiting) = try await run.github.send(
            "comment", ["number": issue, "body": "/so Add a fourth line. held=fourth", "association": "MEMBER"])
        #expect(waiting.map(\.status) == [202])
        try run.startLoop(1)
        var said = ""
        for _ in 0..<150 where !said.contains("wait: a task of \(run.workspace) is under way") {
            try await Task.sleep(for: .seconds(1))
            said = try run.t.read("loop-1.log")
        }
        #expect(
            said.contains("wait: a task of \(run.workspace) is under way (delivery \(waiting[0].delivery))"), "\(said)")
        run.kill9(run.loop)
        run.kill9(run.receiver)
        let (_, lost) = try await run.github.send(
            "comment", ["number": issue, "body": "/so And a fifth.", "association": "COLLABORATOR"])
        #expect(lost.map(\.status) == [0], "the receiver is down: \(lost)")
        try await run.startReceiver()
        let back = try await run.github.send("redeliver", ["delivery": lost[0].delivery]).sent
        #expect(back.map(\.status) == [202], "\(back)")
        #expect(try await run.state(of: waiting[0].delivery) == ["pending"])
        #expect(try await run.state(of: lost[0].delivery) == ["pending"])
        try run.startLoop(2)
        try await AgentE2E.release(run.workspace, "third", run.t, run.env)
        var state: [String] = []
        for _ in 0..<150 where state != ["done"] {
            try await Task.sleep(for: .seconds(2))
            state = try await run.state(of: lost[0].delivery)
        }
        #expect(state == ["done"], "the comment made while the receiver was down ran")
        #expect(try await run.state(of: waiting[0].delivery) == ["done"])
        run.kill9(run.loop)
        said = try run.t.read("loop-2.log")
        print("github loop e2e: the restarted loop said:\n\(said)")
        #expect(
            said.contains(
                "github: \(run.repo)#\(issue): task \(run.workspace) (2 asks) (deliveries \(waiting[0].delivery), "
                    + "\(lost[0].delivery))"), "\(said)")
        try await closedWhileATaskRuns(run, issue: issue, pull: pull)
        let subjects = try await run.subjects()
        #expect(subjects.count == 4 && subjects.filter { $0.hasPrefix("agent: Asked by @") }.count == 2, "\(subjects)")
        let tasksFile = try await run.file("AGENT_TASKS.md")
        #expect(
            tasksFile.components(separatedBy: "Add a third line. held=third").count == 2
                && tasksFile.components(separatedBy: "Add a fourth line.").count == 2
                && tasksFile.components(separatedBy: "And a fifth.").count == 2, "each ran once: \(tasksFile)")
        let comments = try run.github.comments(on: issue, repo: run.repo)
        #expect(
            comments.last?.contains("so removed the workspace `\(run.workspace)` (pull request #\(pull) closed)")
                == true, "\(comments)")
        let inbox = try await run.inbox()
        #expect(inbox.count == 11 && inbox.allSatisfy { $0["state"] as? String == "done" }, "\(inbox)")
    }

    /// The pull request closed while task 4 runs (held): the close waits for it; the task, queued on a thread that has
    /// a pull request, opens no new one when it ends (GitHub has no open pull request for the branch any more: one
    /// would be made, and left open). Then, with changes left uncommitted in the checkout, the removal pushes them to
    /// a branch of their own first and its comment names it.
    static func closedWhileATaskRuns(_ run: Run, issue: Int, pull: Int) async throws {
        let (_, closed) = try await run.github.send("close", ["number": pull, "merged": false])
        #expect(closed.map(\.status) == [202])
        var said = try await run.pass()
        #expect(
            said.contains("wait: a task of \(run.workspace) comes first (delivery \(closed[0].delivery))"), "\(said)")
        try await AgentE2E.release(run.workspace, "fourth", run.t, run.env)
        var states: [String] = []
        for _ in 0..<150 where states.last != "succeeded" {
            try await Task.sleep(for: .seconds(2))
            states = try await run.tasks()
        }
        #expect(states == ["succeeded", "succeeded", "succeeded", "succeeded"], "\(states)")
        let r = try await run.so([
            "deployment", "--name", run.workspace, "exec", "agent", "--", "sh", "-c",
            "echo 'left behind' > /workspace/KEPT.md",
        ])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        said = try await run.passes(until: "remove \(run.workspace)")
        #expect(
            said.contains("remove \(run.workspace) (pull request closed) (delivery \(closed[0].delivery))"), "\(said)")
        var gone = false
        for _ in 0..<150 where !gone {
            gone = try await E2E.kubectl(["get", "namespace", run.workspace]).exitCode != 0
            if !gone { try await Task.sleep(for: .seconds(2)) }
        }
        #expect(gone, "its namespace is gone")
        #expect(
            !FileManager.default.fileExists(atPath: run.t.file("home/github-push/\(run.workspace)")),
            "the loop's copy of its branch is gone with it")
        let creates = try run.github.requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(run.repo)/pulls"
        }
        #expect(creates.map { $0["status"] as? Int } == [201], "no pull request opened after the first: \(creates)")
        #expect(try await run.github.pulls().count == 1)
        let kept = try await AgentE2E.run([
            "git", "--git-dir", run.bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/so/kept/",
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(kept.hasPrefix("so/kept/\(run.workspace)-") && !kept.contains("\n"), "one kept branch: \(kept)")
        let file = try await AgentE2E.run(["git", "--git-dir", run.bare, "show", "\(kept):KEPT.md"]).stdout
        #expect(file == "left behind\n", "the uncommitted file is on the kept branch: \(file)")
        let comments = try run.github.comments(on: issue, repo: run.repo)
        #expect(
            comments.last?.contains("(pull request #\(pull) closed)") == true
                && comments.last?.contains("not pushed is on the branch `\(kept)`") == true, "\(comments)")
    }

    /// examples/dashboard/so-github-loop.yml as written (the test image, its own names for the cluster-wide role and
    /// binding, the test's loop file, the stand-in GitHub on the node's address): the loop runs in a pod as the
    /// example's service account; a label becomes a workspace, a task and a pull request, and the close removes the
    /// workspace, the API server judging every right the example grants.
    @Test func theExampleLoopRunsInAPodFromLabelToClose() async throws {
        let t = try TempDir("so-e2e-github-loop-pod")
        defer { t.cleanup() }
        let run = Run(t)
        try await AgentE2E.buildImage()
        let image = try await Self.lightSoImage(in: t)
        let (daemon, gitURL) = try await AgentE2E.serveRepository(in: t, path: run.repo)
        defer { AgentE2E.stop(daemon) }
        try t.write("secret", Self.secret + "\n")
        run.github = try GitHubStandInServer.start(
            in: t, repo: run.repo, gitDir: run.bare, token: Self.token, secretFile: t.file("secret"),
            listen: AgentE2E.nodeAddress)
        run.env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": Self.token,
            "GITHUB_API_URL": run.github.url,
        ]
        let suffix = String(run.owner.suffix(6))
        let role = "so-deployer-\(suffix)"
        let loop = try Self.writeLoopExample(
            image: image, role: role, api: run.github.url,
            config: run.loopFile(stack: "agent-workspace", gitURL: gitURL, budget: "tasks: 3"), in: t)
        let objects: [[String]] = [
            [
                "-n", "so-github", "deployment/so-github-loop", "serviceaccount/so-github-loop", "role/so-github-loop",
                "rolebinding/so-github-loop", "configmap/so-github-loop", "secret/so-github-loop",
            ],
            ["clusterrolebinding/so-github-loop", "clusterrole/\(role)"],
        ]
        func cleanUp() async {
            await run.cleanUp()
            for o in objects { _ = try? await E2E.kubectl(["delete", "--ignore-not-found", "--wait=false"] + o) }
        }
        do {
            try await run.startReceiver()
            var r = try await E2E.kubectl(["apply", "-f", t.file("role.yml"), "-f", loop])
            #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
            r = try await E2E.kubectl([
                "-n", "so-github", "create", "secret", "generic", "so-github-loop",
                "--from-literal=GITHUB_TOKEN=\(Self.token)",
            ])
            #expect(r.exitCode == 0, "\(r.stderr)")
            r = try await E2E.kubectl([
                "-n", "so-github", "rollout", "status", "deployment/so-github-loop", "--timeout=180s",
            ])
            #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")

            let (issue, sent, pulls) = try await run.labelUntilPullRequest()
            let logs = try await E2E.kubectl(["-n", "so-github", "logs", "deployment/so-github-loop"]).stdout
            print("github loop e2e: the loop in the pod said:\n\(logs)")
            run.workspace = run.workspace(in: logs, issue: issue)
            #expect(pulls.count == 1, "the loop in the pod opened the pull request: \(pulls)")
            #expect(try await run.subjects() == ["agent: Add a greeting"])
            #expect(
                logs.contains("github: \(run.repo)#\(issue): start \(run.workspace) (delivery \(sent[0].delivery))"),
                "\(logs)")
            let pull = pulls.first?["number"] as? Int ?? 0
            let (_, closed) = try await run.github.send("close", ["number": pull, "merged": true])
            #expect(closed.map(\.status) == [202])
            #expect(try await run.namespaceGone(), "the namespace \(run.workspace) is gone")
            let requests = try run.github.requests()
            #expect(
                requests.allSatisfy { $0["auth"] as? String == "Bearer \(Self.token)" && $0["status"] as? Int != 404 },
                "\(requests)")
            let comments = try run.github.comments(on: issue, repo: run.repo)
            #expect(
                comments.first?.contains("so made the workspace `\(run.workspace)`") == true
                    && comments.last?.contains(
                        "so removed the workspace `\(run.workspace)` (pull request #\(pull) merged)")
                        == true,
                "\(comments)")
            // The pod's account, as the API server sees it: the rights the example grants, and no more in so-github.
            let sa = "system:serviceaccount:so-github:so-github-loop"
            for (verb, what, want) in [
                ("update", "configmaps", "yes"), ("patch", "secrets", "yes"), ("delete", "secrets", "yes"),
                ("update", "secrets", "no"), ("create", "pods", "no"),
            ] {
                let can = try await E2E.kubectl(["auth", "can-i", verb, what, "-n", "so-github", "--as", sa])
                #expect(can.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == want, "\(verb) \(what)")
            }
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    /// The loop as a GitHub App (issue 52, item 4): `so github loop` given only the App's ID and key (a key made for
    /// the run) asks the stand-in for an installation token with a JWT the stand-in checks with the key's public half,
    /// and that token is then all it uses; the workspace holds none (issue 64). The stand-in serves the repository
    /// over smart HTTP as a public one (a clone needs no token) and takes only the App's unexpired tokens for a push:
    /// the loop pushes the workspace's work, taken out as a git bundle. Its tokens live 630 s, so 30 s on the loop
    /// asks for a new one, and the second push carries it.
    @Test func asAGitHubAppTheLoopAndThePushesUseItsRenewedTokens() async throws {
        let t = try TempDir("so-e2e-github-app")
        defer { t.cleanup() }
        let run = Run(t)
        try await AgentE2E.buildImage()
        let stack = try AgentE2E.lightStack(in: t)
        _ = try await AgentE2E.bareRepository(in: t, path: run.repo)
        let key = try await AgentE2E.run(["openssl", "genrsa", "-traditional", "-out", t.file("app.pem"), "2048"])
        try #require(key.exitCode == 0, "\(key.stderr)")
        try t.write("secret", Self.secret + "\n")
        run.github = try GitHubStandInServer.start(
            in: t, repo: run.repo, gitDir: run.bare, token: "not-taken-from-an-app", secretFile: t.file("secret"),
            listen: AgentE2E.nodeAddress, app: .init(id: "1207", key: t.file("app.pem"), tokenLife: 630))
        let gitURL = "\(run.github.url)/git/\(run.repo).git"
        try t.write("loop.yml", run.loopFile(stack: stack, gitURL: gitURL, budget: "tasks: 5"))
        run.env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_APP_ID": "1207",
            "GITHUB_APP_PRIVATE_KEY_FILE": t.file("app.pem"), "GITHUB_API_URL": run.github.url,
        ]
        do {
            try await run.startReceiver()
            try run.startLoop(1)
            let started = Date()
            let (issue, sent, pulls) = try await run.labelUntilPullRequest()
            let said = (try? String(contentsOfFile: t.file("loop-1.log"), encoding: .utf8)) ?? ""
            run.workspace = run.workspace(in: said, issue: issue)
            try #require(pulls.count == 1, "the loop opened the pull request as the App: \(said)")
            print("github app e2e: label to pull request in \(Int(Date().timeIntervalSince(started))) s")
            #expect(try await run.subjects() == ["agent: Add a greeting"])
            let first = try await run.github.tokens()
            try #require(first.count == 1, "one token for the first steps: \(first.count)")
            #expect(try await Self.secretKeys(workspace: run.workspace).isDisjoint(with: ["GITHUB_TOKEN", "GH_TOKEN"]))
            try Self.expectOnlyTokens(first, in: run.github, pushes: 1)

            // 30 s on, the token is within 10 minutes of its end: the next task's step asks for another.
            try await Task.sleep(for: .seconds(max(1, 31 - Date().timeIntervalSince(started))))
            let (_, comment) = try await run.github.send(
                "comment", ["number": pulls[0]["number"] as? Int ?? 0, "body": "/so Say goodbye too."])
            #expect(comment.map(\.status) == [202])
            var subjects: [String] = []
            for _ in 0..<150 where subjects.count < 2 {
                try await Task.sleep(for: .seconds(2))
                subjects = try await run.subjects()
            }
            #expect(
                subjects.count == 2 && subjects.last == "agent: Asked by @\(run.owner) in a comment:", "\(subjects)")
            #expect(try await run.file("AGENT_TASKS.md").contains("Say goodbye too."))
            let both = try await run.github.tokens()
            #expect(both.count == 2, "a second token: \(both.count)")
            let pushes = try run.github.requests().filter {
                $0["git"] as? String == "git-receive-pack" && $0["method"] as? String == "POST"
            }
            #expect(pushes.count == 2)
            // The second push (the loop's) carried the new token. (compared as a Bool: a failure prints no token)
            let renewedPushed = pushes.last?["password"] as? String == both.last
            #expect(renewedPushed, "the second push used the renewed token")
            try Self.expectOnlyTokens(both, in: run.github, pushes: 2)
            try await Self.noTokenInThePod(run, of: both, work: "Say goodbye too.")

            let (_, closed) = try await run.github.send(
                "close", ["number": pulls[0]["number"] as? Int ?? 0, "merged": true])
            #expect(closed.map(\.status) == [202])
            #expect(try await run.namespaceGone(), "the namespace \(run.workspace) is gone")
            let log = (try? String(contentsOfFile: t.file("loop-1.log"), encoding: .utf8)) ?? ""
            for token in both { #expect(!log.contains(token), "no token in the loop's lines") }
        } catch {
            await run.cleanUp()
            throw error
        }
        await run.cleanUp()
    }

    /// The keys of the workspace's Secrets (their values never read here).
    static func secretKeys(workspace: String) async throws -> Set<String> {
        let r = try await E2E.kubectl(["-n", workspace, "get", "secrets", "-o", "json"])
        let obj = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return Set(
            (obj?["items"] as? [[String: Any]] ?? []).flatMap { ($0["data"] as? [String: Any])?.keys ?? [:].keys })
    }

    /// Every REST call but the App's own carried one of `tokens`, none was refused, and the git endpoint saw
    /// `pushes` pushes and no request it refused but the challenge that asks for the credentials.
    static func expectOnlyTokens(_ tokens: [String], in github: GitHubStandInServer, pushes: Int) throws {
        let requests = try github.requests()
        let rest = requests.filter { $0["git"] == nil && !($0["path"] as? String ?? "").hasPrefix("/app/") }
            .filter { !($0["path"] as? String ?? "").hasSuffix("/installation") }
        #expect(!rest.isEmpty)
        for r in rest {
            let auth = r["auth"] as? String ?? ""
            #expect(
                tokens.contains { auth == "Bearer \($0)" }, "\(r["method"] ?? "") \(r["path"] ?? "") with an App token")
            #expect((r["status"] as? Int ?? 0) < 400, "\(r["method"] ?? "") \(r["path"] ?? ""): \(r["status"] ?? "")")
        }
        let git = requests.filter { $0["git"] != nil }
        #expect(
            git.filter { $0["method"] as? String == "POST" && $0["git"] as? String == "git-receive-pack" }.count
                == pushes)
        for g in git where g["status"] as? Int == 200 && g["git"] as? String == "git-receive-pack" {
            #expect(tokens.contains(g["password"] as? String ?? ""), "git \(g["path"] ?? "") with an App token")
        }
        // The workspace's clone and fetches (a public repository's) carried no token: it holds none.
        #expect(
            git.filter { $0["git"] as? String == "git-upload-pack" }.allSatisfy { $0["password"] is NSNull },
            "a read carried a token")
        #expect(git.allSatisfy { $0["status"] as? Int == 200 || $0["password"] is NSNull }, "git refused a token")
    }

    /// The test's `so` image with the light agent-workspace (AgentE2E.lightStack) as its built-in stacks.
    static func lightSoImage(in t: TempDir) async throws -> String {
        let base = try await SoImage.image(in: t)
        _ = try AgentE2E.lightStack(in: t)
        try t.write(
            "layout/Containerfile",
            """
            FROM \(base)
            COPY stacks /opt/so-light/stacks
            COPY compose /opt/so-light/compose
            COPY config /opt/so-light/config
            ENV SO_ROOT=/opt/so-light

            """)
        let image = "localhost/so-cli-light:e2e"
        try await AgentE2E.buildAndLoad(image, context: t.file("layout"))
        return image
    }

    /// examples/rbac/so-clusterrole.yml's ClusterRole as `role`, in `role.yml`; examples/dashboard/so-github-loop.yml
    /// bound to it, with `image`, the stand-in's `api`, a pass every second and `config` as its loop.yml: its path.
    static func writeLoopExample(image: String, role: String, api: String, config: String, in t: TempDir) throws
        -> String
    {
        let roles = try String(
            contentsOfFile: Path.join(RepoPaths.root, "examples/rbac/so-clusterrole.yml"), encoding: .utf8)
        guard let end = roles.range(of: "\n---\n"), roles.contains("\n  name: so-deployer\n") else {
            throw SoError("examples/rbac/so-clusterrole.yml no longer starts with the ClusterRole so-deployer")
        }
        try t.write(
            "role.yml",
            String(roles[..<end.lowerBound]).replacingOccurrences(
                of: "\n  name: so-deployer\n", with: "\n  name: \(role)\n") + "\n")
        var text = try String(
            contentsOfFile: Path.join(RepoPaths.root, "examples/dashboard/so-github-loop.yml"), encoding: .utf8)
        guard let data = text.range(of: "  loop.yml: |\n"),
            let next = text.range(of: "---\n", range: data.upperBound..<text.endIndex)
        else { throw SoError("so-github-loop.yml no longer holds loop.yml in its ConfigMap") }
        let indented = config.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        text.replaceSubrange(data.upperBound..<next.lowerBound, with: indented.joined(separator: "\n") + "\n")
        for (from, to) in [
            ("image: registry.example.org/so:1.0", "image: \(image)\n          imagePullPolicy: IfNotPresent"),
            ("  kind: ClusterRole\n  name: so-deployer\n", "  kind: ClusterRole\n  name: \(role)\n"),
            (#""--interval", "10"]"#, #""--interval", "1"]"#),
            (
                "            - name: SO_HOME\n",
                "            - name: GITHUB_API_URL\n              value: \(api)\n            - name: SO_HOME\n"
            ),
        ] {
            guard text.contains(from) else { throw SoError("so-github-loop.yml no longer says \(from)") }
            text = text.replacingOccurrences(of: from, with: to)
        }
        try t.write("loop-example.yml", text)
        return t.file("loop-example.yml")
    }
}
