import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// An agent workspace finished on a node that runs containers: a repository served from the host (`git
/// daemon` on the node's address, default branch `trunk`), a stand-in agent CLI in a test image (a script
/// named `claude` that edits a file and commits — no model, no network), and a stand-in GitHub API on
/// loopback for the pull request.
enum AgentE2E {
    /// The real-node kit's node address: pods reach the host there (see ../shared/tools/real-node).
    static let nodeAddress = ProcessInfo.processInfo.environment["SO_E2E_NODE_ADDRESS"] ?? "10.250.0.1"
    static let kit = Path.join(RepoPaths.root, "../shared/tools/real-node")
    static let image = "localhost/so-fake-agent:e2e"

    static func run(_ args: [String], cwd: String? = nil, env: [String: String] = [:], timeout: Double = 300)
        async throws -> ProcessResult
    {
        var e = ProcessInfo.processInfo.environment
        for (k, v) in env { e[k] = v }
        return try await LocalProcessRunner().run(args, workingDirectory: cwd, environment: e, timeout: timeout)
    }

    /// `buildah bud` of `context` as `image` with the kit's buildah, then loaded into the node. The image the name
    /// pointed at before is removed: every run's rebuild left the one before it in buildah's storage without a name,
    /// and 290 of them (22 GB) filled the disk until the kubelet evicted the suites' pods (CI of 2026-11-29).
    static func buildAndLoad(_ image: String, context: String) async throws {
        let before = try await imageID(image)
        var r = try await run([Path.join(kit, "buildah.sh"), "bud", "--isolation", "chroot", "-t", image, context])
        guard r.exitCode == 0 else { throw SoError("building \(image): \(r.stderr)\(r.stdout)") }
        try await removeReplaced(before, by: image)
        r = try await run([Path.join(kit, "load-image.sh"), image])
        guard r.exitCode == 0 else { throw SoError("loading \(image): \(r.stderr)") }
    }

    /// The ID of the image buildah's storage holds as `image`; nil when it holds none.
    static func imageID(_ image: String) async throws -> String? {
        let r = try await run([
            Path.join(kit, "buildah.sh"), "images", "--noheading", "--no-trunc", "--format", "{{.ID}}", image,
        ])
        let id = r.stdout.split(separator: "\n").first.map(String.init)
        return r.exitCode == 0 ? id : nil
    }

    /// Removes the image `image` named before a build (`before`), now that the build gave the name to another.
    static func removeReplaced(_ before: String?, by image: String) async throws {
        guard let before, try await imageID(image) != before else { return }
        // Refused while another name still holds it: then it is not left unnamed, and stays.
        _ = try await run([Path.join(kit, "buildah.sh"), "rmi", before])
    }

    /// Runs `body`, then removes the workspace whether it passed or threw.
    static func removing(_ ws: String, _ t: TempDir, _ env: [String: String], _ body: () async throws -> Void)
        async throws
    {
        do { try await body() } catch {
            _ = try? await E2E.so(["down", ws, "--discard"], cwd: t.path, env: env)
            throw error
        }
        _ = try? await E2E.so(["down", ws, "--discard"], cwd: t.path, env: env)
    }

    /// The built-in layout copied into `t` with the agents' and postgres' CPU and memory requests cut, so 20
    /// workspaces fit a 2-core node beside the other suites; returns the stack's path (its name stays agent-workspace).
    /// `agentImages`: the agents keep their images (`so up` runs claude's or aider's where the node has it). Left out
    /// by default: the workspaces run the stack's own image, which no suite rebuilds, where they ran claude's whenever
    /// the node had it from an earlier run, and AgentCLIE2ETests' rebuild of it, loaded into the node under the same
    /// name, once took the image from under a pool suite's restart ("failed to resolve image sha256:…: not found").
    static func lightStack(in t: TempDir, agentImages: Bool = false) throws -> String {
        for d in ["stacks", "compose", "config"] {
            try FileManager.default.copyItem(atPath: Path.join(RepoPaths.root, d), toPath: t.file("layout/\(d)"))
        }
        let path = t.file("layout/stacks/agent-workspace/stack.yml")
        var text = try String(contentsOfFile: path, encoding: .utf8)
        for (from, to) in [
            ("reservations: {cpus: \"0.25\", memory: 512M}", "reservations: {cpus: \"0.02\", memory: 64M}"),
            ("reservations: {cpus: \"0.1\", memory: 128M}", "reservations: {cpus: \"0.02\", memory: 64M}"),
        ]
            + (agentImages
                ? []
                : [
                    ("    image: so-agent-workspace-claude:local\n", ""),
                    ("    image: so-agent-workspace-aider:local\n", ""),
                ])
        {
            guard text.contains(from) else { throw SoError("stack.yml no longer says \(from)") }
            text = text.replacingOccurrences(of: from, with: to)
        }
        // Each test's copy is its own stack: pools are the cluster's, matched by their stack's files, and suites
        // running at once must not claim each other's members.
        text += "# the e2e copy of \(Path.basename(t.path))\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return Path.dirname(path)
    }

    /// Stops a server this test started, and the children it forked (git daemon serves from a child).
    static func stop(_ p: Process) {
        let pid = p.processIdentifier
        _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/pkill"), arguments: ["-KILL", "-P", "\(pid)"])
            .waitUntilExit()
        kill(pid, SIGKILL)
    }

    static let gitEnv = [
        "GIT_AUTHOR_NAME": "e2e", "GIT_AUTHOR_EMAIL": "e2e@so.invalid", "GIT_COMMITTER_NAME": "e2e",
        "GIT_COMMITTER_EMAIL": "e2e@so.invalid",
    ]

    /// The test image: so-agent-workspace:local plus the stand-in `claude`, built with the kit's buildah
    /// and loaded into the node's containerd (as `kind load` would). Once per test process, however many suites
    /// ask: each of three at once made the same image, leaving the one before it without a name.
    static func buildImage() async throws { try await built.value }

    static let built = Task { try await buildImageNow(in: TempDir("so-fake-agent")) }

    static func buildImageNow(in t: TempDir) async throws {
        try t.write(
            "image/claude",
            """
            #!/bin/sh
            # Stand-in agent CLI for so's e2e tests: claude -p TEXT edits a file and commits. A text with
            # "(slow)" says a step and takes 8 s first; "held=NAME" says a step and waits for the test to
            # touch so-release-NAME in the checkout's git directory (5 minutes at most: AgentE2E.release); with
            # --output-format json the last line is Claude Code's
            # result line, with its usage and cost; with --output-format stream-json (the default agent's command)
            # everything it says is Claude Code's JSON events, the result line last.
            [ "$1" = "-p" ] || { echo "fake claude: expected -p TEXT" >&2; exit 2; }
            case " $* " in
            *" --output-format stream-json "*) mode=stream ;;
            *" --output-format json "*) mode=json ;;
            *) mode=text ;;
            esac
            say() {
              if [ $mode = stream ]; then
                printf '{"type":"assistant","message":{"content":[{"type":"text","text":"%s"}],"usage":{"output_tokens":9}}}\\n' "$1"
              else
                echo "$1"
              fi
            }
            [ $mode = stream ] && echo '{"type":"system","subtype":"init","cwd":"/workspace","model":"fake"}'
            say "fake agent: working on: $2"
            case "$2" in
            *"(slow)"*) echo "thinking" > "${SO_TASK_STEP:-/dev/null}"; sleep 8 ;;
            *"held="*)
              echo "thinking" > "${SO_TASK_STEP:-/dev/null}"
              held=$(printf '%s' "$2" | sed -n 's/.*held=\\([a-z0-9-]*\\).*/\\1/p')
              release="$(git rev-parse --absolute-git-dir)/so-release-$held"
              i=0; until [ -e "$release" ] || [ $i -ge 3000 ]; do sleep 0.1; i=$((i+1)); done ;;
            esac
            printf '%s\\n' "$2" >> AGENT_TASKS.md
            [ $mode = stream ] && echo '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"git commit"}}]}}'
            git add AGENT_TASKS.md && git commit -q -m "agent: $2" && say "fake agent: committed"
            case $mode in
            json)
              echo '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.0123,"usage":{"input_tokens":1000,"output_tokens":200,"cache_read_input_tokens":0}}' ;;
            stream)
              echo '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"duration_ms":1500,"result":"done","total_cost_usd":0.0123,"usage":{"input_tokens":1000,"output_tokens":200,"cache_read_input_tokens":0}}' ;;
            esac

            """)
        try t.write(
            "image/Containerfile", "FROM so-agent-workspace:local\nCOPY --chmod=755 claude /usr/local/bin/claude\n")
        try await buildAndLoad(image, context: t.file("image"))
    }

    /// Lets the stand-in agent's task "… held=NAME" in workspace `ws` go on (`so deployment exec` as `env`).
    static func release(_ ws: String, _ name: String, _ t: TempDir, _ env: [String: String]) async throws {
        let r = try await E2E.so(
            [
                "deployment", "--name", ws, "exec", "agent", "--", "sh", "-c",
                "touch \"$(git -C /workspace rev-parse --absolute-git-dir)/so-release-\(name)\"",
            ], cwd: t.path, env: env)
        guard r.exitCode == 0 else { throw SoError("releasing \(name) in \(ws): \(r.stdout)\(r.stderr)") }
    }

    /// `git daemon` serving `srv/` on the node's address (push allowed), until the process is stopped; the repository
    /// is `srv/PATH.git` (`path`: OWNER/NAME, which a pull request's repository is read from).
    static func serveRepository(in t: TempDir, path: String = "acme/app") async throws -> (Process, url: String) {
        let head = try await bareRepository(in: t, path: path)
        // Suites that run at once each serve one on a random port: a port another's daemon holds is answered by
        // that daemon (this one exits), so the answer must be this repository's head.
        for _ in 0..<5 {
            let port = 19000 + Int.random(in: 0..<900)
            let daemon = Process()
            daemon.executableURL = URL(fileURLWithPath: "/usr/bin/git")
            daemon.arguments = [
                "daemon", "--base-path=\(t.file("srv"))", "--export-all", "--enable=receive-pack", "--reuseaddr",
                "--listen=\(nodeAddress)", "--port=\(port)", t.file("srv"),
            ]
            daemon.standardOutput = FileHandle.nullDevice
            daemon.standardError = FileHandle.nullDevice
            try daemon.run()
            let url = "git://\(nodeAddress):\(port)/\(path).git"
            for _ in 0..<50 {
                let r = try await run(["git", "ls-remote", url])
                if r.exitCode == 0 && r.stdout.hasPrefix(head) && daemon.isRunning { return (daemon, url) }
                if !daemon.isRunning { break }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            stop(daemon)
        }
        throw SoError("git daemon did not serve \(t.file("srv")) on any of 5 ports")
    }

    /// `srv/PATH.git` in `t`: a bare repository of one commit (README.md) on `trunk`; that commit's id.
    static func bareRepository(in t: TempDir, path: String) async throws -> String {
        let seed = t.file("seed")
        _ = try await run(["git", "init", "-q", "-b", "trunk", seed], env: gitEnv)
        try t.write("seed/README.md", "hello\n")
        _ = try await run(["git", "-C", seed, "add", "-A"], env: gitEnv)
        _ = try await run(["git", "-C", seed, "commit", "-q", "-m", "first"], env: gitEnv)
        _ = try await run(["git", "clone", "-q", "--bare", seed, t.file("srv/\(path).git")], env: gitEnv)
        return try await run(["git", "-C", seed, "rev-parse", "HEAD"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// A stand-in for GitHub's pull-request endpoint on loopback: records each request, answers 201.
    static func serveGitHub(in t: TempDir) throws -> (Process, url: String, log: String) {
        let log = t.file("github-requests.jsonl")
        let portFile = t.file("github-port")
        try t.write(
            "github.py",
            """
            import http.server, json, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                    with open(sys.argv[2], 'a') as f:
                        f.write(json.dumps({'path': self.path, 'auth': self.headers.get('Authorization', ''), 'body': json.loads(body)}) + '\\n')
                    out = json.dumps({'number': 1, 'html_url': 'http://github.test/acme/app/pull/1'}).encode()
                    self.send_response(201); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(out))); self.end_headers()
                    self.wfile.write(out)
                def log_message(self, *a): pass
            # A port of its own (suites that run at once each serve one), told through a file once it listens.
            srv = http.server.HTTPServer(('127.0.0.1', 0), H)
            with open(sys.argv[1] + '.part', 'w') as f:
                f.write(str(srv.server_address[1]))
            import os; os.rename(sys.argv[1] + '.part', sys.argv[1])
            srv.serve_forever()

            """)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", t.file("github.py"), portFile, log]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        for _ in 0..<200 {
            if let port = try? String(contentsOfFile: portFile, encoding: .utf8), Int(port) != nil {
                return (p, "http://127.0.0.1:\(port)", log)
            }
            usleep(25_000)
        }
        p.terminate()
        throw SoError("the stand-in GitHub API did not start (python3 \(t.file("github.py")))")
    }
}

@Suite(
    .serialized,
    RealNode.required
)
struct WorkspaceE2ETests {
    @Test func aWorkspaceFromCloneToPushedBranchAndPullRequest() async throws {
        let t = try TempDir("so-e2e-agent")
        defer { t.cleanup() }
        try await AgentE2E.buildImage()
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let (github, api, _) = try AgentE2E.serveGitHub(in: t)
        defer { AgentE2E.stop(github) }
        let env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": "e2e-github-token-not-real",
            "GITHUB_API_URL": api,
        ]
        let ws = "e2e-agent"
        func so(_ args: [String], cwd: String? = nil) async throws -> ProcessResult {
            try await E2E.so(args, cwd: cwd ?? t.path, env: env)
        }
        func inWorkspace(_ script: String) async throws -> String {
            let r = try await so(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", script])
            #expect(r.exitCode == 0, "\(script): \(r.stdout)\(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try await AgentE2E.removing(ws, t, env) {

            var r = try await so([
                "up", "agent-workspace", "--name", ws, "--config", "GIT_REPO=\(repo)", "--config",
                "AGENT_IMAGE=\(AgentE2E.image)",
                "--config", "GIT_USER_NAME=E2E Agent", "--config", "GIT_USER_EMAIL=agent@e2e.invalid", "--timeout",
                "180", "--progress", "plain",
            ])
            #expect(r.exitCode == 0 && r.stdout.contains("\(ws) is ready"), "\(r.stdout)\n\(r.stderr)")
            #expect(r.stdout.contains("so deployment --name \(ws) task"))

            // The default branch (trunk, not main) was cloned onto the workspace branch; git works as uid 1000.
            #expect(
                try await inWorkspace("id -u; git rev-parse --abbrev-ref HEAD; git config so.ref; cat README.md")
                    == "1000\nagent/\(ws)\ntrunk\nhello")
            #expect(
                try await inWorkspace(
                    "echo by-hand > hand.txt && git add hand.txt && git commit -q -m 'by hand' && git log -1 --format='%an <%ae>'"
                ) == "E2E Agent <agent@e2e.invalid>")

            // down refuses while that commit is only in the volume.
            r = try await so(["down", ws])
            #expect(
                r.exitCode == 1 && r.stderr.contains("1 commit on agent/\(ws) not pushed")
                    && r.stderr.contains("by hand"), "\(r.stdout)\n\(r.stderr)")
            // So does stop --delete-volumes, which deletes the same volume.
            r = try await so(["deployment", "--name", ws, "stop", "--delete-volumes"])
            #expect(
                r.exitCode == 1 && r.stderr.contains("1 commit on agent/\(ws) not pushed")
                    && r.stderr.contains("--discard"), "\(r.stdout)\n\(r.stderr)")

            // The work survives stop/start (the clone keeps the checkout).
            r = try await so(["deployment", "--name", ws, "stop"])
            #expect(r.exitCode == 0, "\(r.stderr)")
            r = try await so(["deployment", "--name", ws, "start", "--timeout", "180", "--progress", "plain"])
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(try await inWorkspace("git log -1 --format=%s; cat hand.txt") == "by hand\nby-hand")

            // diff against the start, push to origin, fetch into a local clone.
            r = try await so(["deployment", "--name", ws, "diff", "--stat"])
            #expect(r.exitCode == 0 && r.stdout.contains("hand.txt"), "\(r.stdout)\n\(r.stderr)")
            r = try await so(["deployment", "--name", ws, "push"])
            #expect(r.exitCode == 0 && r.stdout.contains("pushed agent/\(ws)"), "\(r.stdout)\n\(r.stderr)")
            #expect(
                try await AgentE2E.run([
                    "git", "--git-dir", t.file("srv/acme/app.git"), "log", "-1", "--format=%s", "agent/\(ws)",
                ]).stdout == "by hand\n")
            _ = try await inWorkspace("echo second >> hand.txt && git commit -qam second")
            _ = try await AgentE2E.run(["git", "clone", "-q", repo, t.file("mine")])
            r = try await so(["deployment", "--name", ws, "fetch"], cwd: t.file("mine"))
            #expect(r.exitCode == 0 && r.stdout.contains("fetched agent/\(ws)"), "\(r.stdout)\n\(r.stderr)")
            #expect(
                try await AgentE2E.run(["git", "-C", t.file("mine"), "log", "-2", "--format=%s", "agent/\(ws)"]).stdout
                    == "second\nby hand\n")

            // The headless task: the stand-in agent commits, so pushes the branch and opens the pull request.
            r = try await so(["deployment", "--name", ws, "task", "--pr", "add a greeting"])
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(
                r.stdout.contains("fake agent: committed")
                    && r.stdout.contains("pull request http://github.test/acme/app/pull/1"), "\(r.stdout)")
            // The default agent's JSON events, read as text, and its cost (never "not reported").
            #expect(
                r.stdout.contains("→ Bash git commit")
                    && r.stdout.contains("■ done: 2 turns · 1.5 s · 1000 in · 200 out")
                    && !r.stdout.contains(#""type":"assistant""#), "\(r.stdout)")
            #expect(!r.stdout.contains("e2e-github-token") && !r.stderr.contains("e2e-github-token"))
            #expect(
                try await AgentE2E.run([
                    "git", "--git-dir", t.file("srv/acme/app.git"), "show", "agent/\(ws):AGENT_TASKS.md",
                ]).stdout == "add a greeting\n")
            let logged = try t.read("github-requests.jsonl")
            #expect(
                logged.contains("\"path\": \"/repos/acme/app/pulls\"") && logged.contains("\"head\": \"agent/\(ws)\"")
                    && logged.contains("\"base\": \"trunk\"")
                    && logged.contains("Bearer e2e-github-token-not-real"), "\(logged)")
            // A failing agent's exit code is the command's; with -o json its output goes to stderr, the summary to stdout.
            r = try await so([
                "deployment", "--name", ws, "task", "-o", "json", "--command", "echo failing; exit 5", "anything",
            ])
            #expect(r.exitCode == 5 && r.stderr.contains("failing"), "\(r.stdout)\n\(r.stderr)")
            let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            #expect(
                summary?["exitCode"] as? Int == 5 && summary?["branch"] as? String == "agent/\(ws)"
                    && summary?["pushed"] as? Bool == true, "\(r.stdout)")

            // Everything is pushed now: down goes through.
            r = try await so(["down", ws])
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        }
    }

    /// A clone that fails is never called ready: `so up` exits 1 naming the agent container (the clone is
    /// its entrypoint) with git's own message, and nothing of the clone is taken for a checkout.
    @Test func aFailedCloneIsNamedWithGitsMessageNeverReady() async throws {
        let t = try TempDir("so-e2e-bad-clone")
        defer { t.cleanup() }
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        let ws = "e2e-bad-clone"
        try await AgentE2E.removing(ws, t, env) {
            let missing = repo.replacingOccurrences(of: "acme/app.git", with: "acme/nope.git")
            let r = try await E2E.so(
                [
                    "up", "agent-workspace", "--name", ws, "--config", "GIT_REPO=\(missing)", "--timeout", "120",
                    // The stack's own image: claude's, which AgentCLIE2ETests rebuilds under its name meanwhile, is not
                    // what this is about (`lightStack`).
                    "--config", "AGENT_IMAGE=so-agent-workspace:local", "--progress", "plain",
                ], cwd: t.path, env: env)
            #expect(r.exitCode == 1 && !r.stdout.contains("is ready"), "\(r.stdout)\n\(r.stderr)")
            #expect(
                r.stderr.contains("container agent keeps crashing")
                    && r.stderr.contains("repository not exported: /acme/nope.git"), "\(r.stderr)")
            #expect(
                r.stderr.contains("logs agent") && r.stderr.contains(t.file("home/deployments/\(ws)")),
                "the hint names the directory: \(r.stderr)")
        }
    }
}
