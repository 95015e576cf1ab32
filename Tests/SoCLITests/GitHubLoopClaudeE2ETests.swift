import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The GitHub loop's walk with the real Claude Code in the workspace (issue 65, item 4) instead of the shell stand-in
/// of `GitHubLoopE2ETests`, whose stand-in GitHub, receiver and loop it reuses: the image `so build-containers --agent
/// claude` builds (`AgentCLIE2E`), the loop's `agent: claude` with the stand-in model API's URL as ANTHROPIC_BASE_URL,
/// the API key in the loop's environment only. An issue labeled → a workspace → a task the CLI does through its Write
/// tool → a pull request of its commit → an outcome comment with the cost the CLI reported; then a writer's `/so` on
/// the pull request → the next task on the same branch and pull request. Asserted on what GitHub would show, and on
/// the key being in the workspace's Secret and nowhere else.
@Suite(.serialized, RealNode.required, AgentCLIE2E.required)
struct GitHubLoopClaudeE2ETests {
    @Test func aLabelAndAWritersCommentAreTasksTheRealClaudeCodeDoesOnOnePullRequest() async throws {
        let t = try TempDir("so-e2e-github-claude")
        defer { t.cleanup() }
        let run = GitHubLoopE2ETests.Run(t)
        _ = try await AgentCLIE2E.buildImage()
        let key = "sk-ant-e2e-" + (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        func write(_ file: String, _ text: String) -> String {
            AgentCLIE2E.turn([
                "tool_use": ["name": "Write", "input": ["file_path": "/workspace/\(file)", "content": text]]
            ])
        }
        let script = """
            {"turns": [\(write("GREETING.md", "Hello from claude.\n")), {"text": "Wrote GREETING.md."},
                       \(write("GOODBYE.md", "Goodbye from claude.\n")), {"text": "Wrote GOODBYE.md."}]}
            """
        let (model, modelURL) = try await AgentCLIE2E.serveModel(in: t, script: script, key: key)
        defer { AgentE2E.stop(model) }
        let stack = try AgentE2E.lightStack(in: t, agentImages: true)
        let (daemon, gitURL) = try await AgentE2E.serveRepository(in: t, path: run.repo)
        defer { AgentE2E.stop(daemon) }
        try t.write("secret", GitHubLoopE2ETests.secret + "\n")
        try t.write(
            "loop.yml",
            """
            repositories: [\(run.repo)]
            label: so
            stack: \(stack)
            agent: claude
            config:
              - GIT_REPO=\(gitURL)
              - ANTHROPIC_BASE_URL=\(modelURL)
              - GIT_USER_NAME=so-bot
              - GIT_USER_EMAIL=so-bot@e2e.invalid
            budget:
              tasks: 4
              workspaces: 1

            """)
        run.github = try GitHubStandInServer.start(
            in: t, repo: run.repo, gitDir: run.bare, token: GitHubLoopE2ETests.token, secretFile: t.file("secret"))
        run.env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": GitHubLoopE2ETests.token,
            "GITHUB_API_URL": run.github.url,
            "ANTHROPIC_API_KEY": key,
        ]
        do {
            try await run.startReceiver()
            var said = try await Self.labelToPullRequest(run)
            said += try await Self.writersCommentToSecondCommit(run)
            try await Self.expectKeyOnlyInTheSecret(key, run, said: said)
            #expect(
                AgentCLIE2E.requests(t).filter { $0["turn"] is Int }.count == 4
                    && !AgentCLIE2E.requests(t).filter { $0["path"] != nil }.contains { $0["key_ok"] as? Bool != true },
                "four main-loop requests, each with the key: \(AgentCLIE2E.requests(t))")
        } catch {
            await run.cleanUp()
            throw error
        }
        await run.cleanUp()
    }

    /// The label: a workspace, Claude Code's task (a Write), the pull request of its commit and the outcome comment
    /// with the cost of its two model requests (the stand-in's 1000 in and 200 out each). What the passes said.
    static func labelToPullRequest(_ run: GitHubLoopE2ETests.Run) async throws -> String {
        let (answer, sent) = try await run.github.send(
            "label", ["title": "Add a greeting", "body": "Write GREETING.md.", "label": "so"])
        let issue = answer["number"] as? Int ?? 0
        #expect(sent.map(\.status) == [202], "\(sent)")
        var said = try await run.pass()
        run.workspace = run.workspace(in: said, issue: issue)
        try #require(!run.workspace.isEmpty, "no workspace started: \(said)")
        said += try await run.passes(until: "\(run.workspace) is idle, its task ended")

        #expect(try await run.subjects() == ["so task: Add a greeting"])
        #expect(try await run.file("GREETING.md") == "Hello from claude.\n", "the file Claude Code's Write made")
        let pulls = try await run.github.pulls()
        let head = pulls.first?["head"] as? [String: Any]
        let sha = try await Self.head(run)
        #expect(
            pulls.count == 1 && head?["ref"] as? String == "agent/\(run.workspace)" && head?["sha"] as? String == sha,
            "\(pulls)")
        let pull = pulls.first?["number"] as? Int ?? 0
        let comments = try run.github.comments(on: issue, repo: run.repo)
        #expect(
            comments.count == 2 && comments[1].contains("Task 1 in `\(run.workspace)` succeeded")
                && comments[1].contains("`\(sha.prefix(7))` so task: Add a greeting")
                && comments[1].contains("https://github.com/\(run.repo)/pull/\(pull)")
                && comments[1].contains("Cost: 2000 in · 400 out · $"), "\(comments)")
        // The report's steps: the tool call the CLI made.
        let r = try await run.so(["deployment", "--name", run.workspace, "tasks", "show", "1", "-o", "json"])
        let report = AgentCLIE2E.json(r)
        let steps = (report["progress"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(steps.contains("→ Write /workspace/GREETING.md"), "\(r.stdout)")
        return said + r.stdout + r.stderr
    }

    /// A writer's `/so` on the pull request: the next task in the same workspace, its commit on the same branch, the
    /// pull request moved on to it and no second one opened; its outcome comment with its cost.
    static func writersCommentToSecondCommit(_ run: GitHubLoopE2ETests.Run) async throws -> String {
        let pull = try await run.github.pulls().first?["number"] as? Int ?? 0
        let (_, sent) = try await run.github.send(
            "comment", ["number": pull, "body": "/so Add a goodbye in GOODBYE.md.", "association": "OWNER"])
        #expect(sent.map(\.status) == [202], "\(sent)")
        var said = try await run.pass()
        #expect(said.contains("task \(run.workspace) (delivery \(sent.first?.delivery ?? "?"))"), "\(said)")
        said += try await run.passes(until: "\(run.workspace) is idle, its task ended")

        let subjects = try await run.subjects()
        #expect(
            subjects.count == 2 && subjects.first == "so task: Add a greeting"
                && subjects.last?.hasPrefix("so task: Asked by @\(run.owner) in a comment") == true, "\(subjects)")
        #expect(try await run.file("GOODBYE.md") == "Goodbye from claude.\n")
        #expect(try await run.file("GREETING.md") == "Hello from claude.\n")
        let pulls = try await run.github.pulls()
        let sha = try await Self.head(run)
        #expect(
            pulls.count == 1 && pulls.first?["number"] as? Int == pull
                && (pulls.first?["head"] as? [String: Any])?["sha"] as? String == sha,
            "one pull request, at the second commit: \(pulls)")
        let creates = try run.github.requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(run.repo)/pulls"
        }
        #expect(creates.map { $0["status"] as? Int } == [201], "no second pull request asked for: \(creates)")
        let outcome = try run.github.requests().filter {
            $0["method"] as? String == "POST" && ($0["path"] as? String ?? "").hasSuffix("/comments")
        }.compactMap { ($0["body"] as? [String: Any])?["body"] as? String }.last { $0.contains("Task 2 in ") }
        #expect(
            outcome?.contains("Task 2 in `\(run.workspace)` succeeded") == true
                && outcome?.contains("`\(sha.prefix(7))` so task: Asked by") == true
                && outcome?.contains("Cost: 2000 in · 400 out · $") == true, "\(String(describing: outcome))")
        return said
    }

    /// The key is in the workspace's Secret, and in nothing GitHub, the loop's lines, the pods, the loop's own
    /// objects or the files on this machine show (compared here, never printed).
    static func expectKeyOnlyInTheSecret(_ key: String, _ run: GitHubLoopE2ETests.Run, said: String) async throws {
        let secrets = try await E2E.kubectl(["-n", run.workspace, "get", "secrets", "-o", "json"])
        let held = secrets.stdout.contains(Data(key.utf8).base64EncodedString())
        #expect(held, "the workspace's Secret holds the key")
        let github = (try? String(contentsOfFile: run.github.log, encoding: .utf8)) ?? ""
        #expect(!github.isEmpty && !github.contains(key), "no request to GitHub carried the key")
        #expect(!said.contains(key), "the loop's passes and the report did not print the key")
        for args in [
            ["-n", run.workspace, "get", "pods,configmaps,deployments", "-o", "yaml"],
            ["-n", "so-github", "get", "configmaps,secrets", "-o", "yaml"],
        ] {
            let r = try await E2E.kubectl(args)
            let clean =
                r.exitCode == 0 && !r.stdout.contains(key) && !r.stdout.contains(Data(key.utf8).base64EncodedString())
            #expect(clean, "the key is not in \(args.joined(separator: " "))")
        }
        let logs = try await run.so(["deployment", "--name", run.workspace, "tasks", "logs", "2"])
        #expect(logs.exitCode == 0 && !(logs.stdout + logs.stderr).contains(key), "the task's log")
        let files = try await AgentE2E.run(["grep", "-rlF", key, run.t.file("home")])
        #expect(files.stdout.isEmpty, "no file of the loop's SO_HOME holds the key: \(files.stdout)")
    }

    /// The workspace's branch in the bare repository.
    static func head(_ run: GitHubLoopE2ETests.Run) async throws -> String {
        try await AgentE2E.run(["git", "--git-dir", run.bare, "rev-parse", "agent/\(run.workspace)"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
