import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The real agent CLIs in a workspace on a node that runs containers: the image `so build-containers --agent`
/// builds with the kit's buildah (Claude Code from the claude-agent-sdk wheel, which `.ci/run` downloads into
/// SO_E2E_AGENT_WHEELS: the build itself reads no index), a scripted stand-in model API on the node's address
/// (ModelStandIn/model_standin.py: Anthropic Messages with SSE and tool use, OpenAI chat completions), and
/// `so up --agent claude` given only the stand-in's URL as ANTHROPIC_BASE_URL. No network beyond the node.
enum AgentCLIE2E {
    static let wheels = ProcessInfo.processInfo.environment["SO_E2E_AGENT_WHEELS"].flatMap { dir in
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).contains {
            $0.hasPrefix("claude_agent_sdk-") && $0.hasSuffix(".whl")
        } ? dir : nil
    }
    static var required: ConditionTrait {
        .enabled(
            if: wheels != nil,
            "SO_E2E_AGENT_WHEELS names no directory with the claude-agent-sdk wheel (.ci/run downloads it): no real agent CLI"
        )
    }
    static let image = "so-agent-workspace-claude:local"
    /// Whether the wheels directory also holds aider-chat's (with its dependencies and pip: `.ci/run` with
    /// SO_CI_AIDER=1).
    static let aider =
        wheels.map { dir in
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).contains { $0.hasPrefix("aider_chat-") }
        } ?? false
    static let standIn = Path.join(RepoPaths.root, "Tests/SoCLITests/ModelStandIn/model_standin.py")

    /// `so build-containers --stack agent-workspace --agent AGENT` with the kit's buildah (DOCKER), pip reading only
    /// the downloaded wheels; the image loaded into the node under the name the pod asks for.
    static func buildImage(_ agent: String = "claude") async throws -> ProcessResult {
        let image = "so-agent-workspace-\(agent):local"
        let kit = AgentE2E.kit
        let buildah = Path.join(kit, "buildah.sh")
        // The base counts as built when buildah's storage has it (pulled from the node's registry stand-in).
        var r = try await AgentE2E.run([buildah, "pull", "-q", "so-agent-workspace:local"])
        guard r.exitCode == 0 else { throw SoError("buildah pull so-agent-workspace:local: \(r.stderr)") }
        let env = [
            "DOCKER": buildah, "BUILDAH_ISOLATION": "chroot", "PIP_FIND_LINKS": wheels!, "PIP_NO_INDEX": "1",
            "SO_ROOT": RepoPaths.root,
        ]
        let before = try await AgentE2E.imageID("localhost/\(image)")
        let build = try await AgentE2E.run(
            [E2E.binary, "build-containers", "--stack", "agent-workspace", "--agent", agent, "--force-rebuild"],
            env: env, timeout: 1800)
        guard build.exitCode == 0 else { throw SoError("build-containers --agent \(agent): \(build.stderr)") }
        // buildah names it localhost/…; the pod's image without a registry is docker.io/library/… to containerd.
        let full = "docker.io/library/\(image)"
        r = try await AgentE2E.run([buildah, "tag", "localhost/\(image)", full])
        guard r.exitCode == 0 else { throw SoError("buildah tag: \(r.stderr)") }
        // The run before's image (700 MB), which both names held until now.
        try await AgentE2E.removeReplaced(before, by: "localhost/\(image)")
        r = try await AgentE2E.run([Path.join(kit, "load-image.sh"), full], timeout: 900)
        guard r.exitCode == 0 else { throw SoError("loading \(full): \(r.stderr)") }
        // so up reads the node's images as the kubelet reports them (its status, refreshed every few seconds).
        for _ in 0..<120 {
            let names = try await E2E.kubectl(["get", "nodes", "-o", "jsonpath={.items[*].status.images[*].names}"])
            if names.stdout.contains("\"\(full)\"") { return build }
            try await Task.sleep(for: .seconds(1))
        }
        throw SoError("no node lists \(full) two minutes after it was loaded")
    }

    /// The workspace's page (`so dashboard --read-only` with `env`, signed in with curl): its HTML once it shows
    /// `until` (or after 30 s).
    /// `task`: the task whose report the page shows (its steps in its timeline).
    static func page(_ namespace: String, task: Int? = nil, env: [String: String], until: String, in t: TempDir)
        async throws -> String
    {
        let token = String(repeating: "5d", count: 32)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: E2E.binary)
        p.arguments = ["dashboard", "--port", "0", "--read-only"]
        p.environment = ProcessInfo.processInfo.environment.merging(env) { _, b in b }.merging([
            "SO_DASHBOARD_TOKEN": token
        ]) { _, b in b }
        try t.write("page.out", "")
        p.standardOutput = FileHandle(forWritingAtPath: t.file("page.out"))
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { p.terminate() }
        let session = try await PageSession.signIn(token, in: t, timeout: 60)
        // The page reads the tasks from the workspace after it starts ("not read yet" until then).
        var html = ""
        for _ in 0..<60 {
            html = try await session.curl(
                ["\(session.base)/d/\(namespace)" + (task.map { "?task=\($0)" } ?? "")], timeout: 60)
            if html.contains(until) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        return html
    }

    /// The stand-in model API on the node's address (a port of its own), following `script`; its request log is
    /// `t/model/requests.jsonl`, and a turn `{"hold": NAME}` waits for the file `t/model/NAME`.
    static func serveModel(in t: TempDir, script: String, key: String) async throws -> (Process, url: String) {
        try t.write("model/script.json", script)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", standIn, "--script", t.file("model/script.json"), "--log", t.file("model/requests.jsonl"),
            "--host", AgentE2E.nodeAddress, "--port-file", t.file("model/port"), "--key", key,
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        for _ in 0..<400 {
            if let port = try? t.read("model/port"), Int(port) != nil {
                return (p, "http://\(AgentE2E.nodeAddress):\(port)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        p.terminate()
        throw SoError("the stand-in model API did not start (\(standIn))")
    }

    /// The stand-in's request log, one JSON object a line.
    static func requests(_ t: TempDir) -> [[String: Any]] {
        ((try? t.read("model/requests.jsonl")) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func json(_ r: ProcessResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// A scripted turn as JSON.
    static func turn(_ fields: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }
}

@Suite(.serialized, RealNode.required, AgentCLIE2E.required)
struct AgentCLIE2ETests {
    @Test func claudeCodeEditsThroughItsToolsIsFollowedCancelledAndRefusedWithTheKeyOnlyInTheSecret() async throws {
        let t = try TempDir("so-e2e-claude")
        defer { t.cleanup() }
        let build = try await AgentCLIE2E.buildImage()
        // The pin and the CLI's own version are said by the build.
        #expect(build.stdout.contains("claude-agent-sdk=="), "\(build.stdout)")
        #expect(build.stdout.contains("(Claude Code)") || build.stderr.contains("(Claude Code)"), "\(build.stdout)")

        let key = "sk-ant-e2e-" + (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let write = AgentCLIE2E.turn([
            "text": "Writing the file.",
            "tool_use": [
                "name": "Write", "input": ["file_path": "/workspace/hello.txt", "content": "hello from claude\n"],
            ],
        ])
        // A command the permission mode (acceptEdits) does not allow without asking; -p cannot ask, so it is refused.
        let refused = AgentCLIE2E.turn([
            "tool_use": [
                "name": "Bash", "input": ["command": "curl -s http://example.invalid/", "description": "fetch"],
            ]
        ])
        let partial = AgentCLIE2E.turn([
            "tool_use": [
                "name": "Write", "input": ["file_path": "/workspace/partial.txt", "content": "half done\n"],
            ]
        ])
        let script = """
            {"turns": [\(refused), \(write), {"text": "Wrote hello.txt."},
                       \(partial), {"hold": "release-held"}, {"text": "never sent"}]}
            """
        let (model, url) = try await AgentCLIE2E.serveModel(in: t, script: script, key: key)
        defer { AgentE2E.stop(model) }
        let stack = try AgentE2E.lightStack(in: t, agentImages: true)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "ANTHROPIC_API_KEY": key]
        let ws = "e2e-claude"
        func so(_ args: [String]) async throws -> ProcessResult {
            try await E2E.so(["deployment", "--name", ws] + args, cwd: t.path, env: env)
        }
        var said: [String] = []
        try await AgentE2E.removing(ws, t, env) {
            // No AGENT_IMAGE: the agent's image is on the node, so up runs it; the gateway is one --config.
            var r = try await E2E.so(
                [
                    "up", stack, "--name", ws, "--agent", "claude", "--config", "GIT_REPO=\(repo)", "--config",
                    "ANTHROPIC_BASE_URL=\(url)", "--timeout", "180", "--progress", "plain",
                ], cwd: t.path, env: env)
            said.append(r.stdout + r.stderr)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(
                r.stdout.contains("agent image: \(AgentCLIE2E.image) (claude's, found on the cluster)"), "\(r.stdout)")

            // Task 1, attached: a refused Bash call, then a file written through Write; so commits and pushes it.
            r = try await so(["task", "write hello.txt"])
            said.append(r.stdout + r.stderr)
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            r = try await so(["tasks", "show", "1", "-o", "json"])
            said.append(r.stdout + r.stderr)
            let first = AgentCLIE2E.json(r)
            let cost = first["cost"] as? [String: Any] ?? [:]
            #expect(
                first["state"] as? String == "succeeded" && first["pushed"] as? String == "agent/\(ws)", "\(r.stdout)")
            #expect(
                (first["files"] as? [[String: Any]])?.map { $0["path"] as? String } == ["hello.txt"]
                    && (first["commits"] as? [[String: Any]])?.count == 1, "\(r.stdout)")
            // The CLI's own result line: three main-loop requests of 1000 in / 200 out each, its price for them.
            #expect(
                cost["reported"] as? Bool == true && cost["inputTokens"] as? Int == 3000
                    && cost["outputTokens"] as? Int == 600 && (cost["usd"] as? String).flatMap(Double.init) ?? 0 > 0,
                "\(cost)")
            // Its steps in the report: the tool calls the CLI made (the refused one too), in order, the last its step.
            let steps = (first["progress"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }.filter {
                $0.hasPrefix("→ ")
            }
            #expect(
                steps == ["→ Bash curl -s http://example.invalid/", "→ Write /workspace/hello.txt"]
                    && first["step"] as? String == "Write /workspace/hello.txt", "\(r.stdout)")
            r = try await so(["tasks", "show", "1"])
            said.append(r.stdout + r.stderr)
            #expect(
                r.stdout.contains(" → Bash curl -s http://example.invalid/\n")
                    && r.stdout.contains(" → Write /workspace/hello.txt\n"), "\(r.stdout)")
            // Its log: the CLI's own events, as text (the tool calls it made, the refused one too).
            r = try await so(["tasks", "logs", "1"])
            said.append(r.stdout + r.stderr)
            #expect(
                r.stdout.contains("→ Bash curl -s http://example.invalid/")
                    && r.stdout.contains("→ Write /workspace/hello.txt"), "\(r.stdout)")
            #expect(
                try await AgentE2E.run([
                    "git", "--git-dir", t.file("srv/acme/app.git"), "show", "agent/\(ws):hello.txt",
                ]).stdout == "hello from claude\n", "the pushed branch holds the file the CLI wrote")
            // The refused call came back to the model as an error, and the CLI went on.
            let main = AgentCLIE2E.requests(t).filter { $0["turn"] is Int }
            let results = main.flatMap { ($0["tool_results"] as? [[String: Any]]) ?? [] }
            #expect(
                results.first?["is_error"] as? Bool == true
                    && (results.first?["text"] as? String ?? "").lowercased().contains("approv"), "\(results)")
            r = try await so(["exec", "agent", "--", "sh", "-c", "ls /workspace"])
            #expect(r.exitCode == 0 && r.stdout.contains("hello.txt"), "\(r.stdout)")

            // Task 2, detached: followed while the CLI waits on the model, then cancelled there.
            r = try await so(["task", "--detach", "write partial.txt then wait"])
            #expect(r.exitCode == 0 && r.stdout.hasPrefix("2"), "\(r.stdout)\n\(r.stderr)")
            let follow = Process()
            follow.executableURL = URL(fileURLWithPath: E2E.binary)
            follow.arguments = ["deployment", "--name", ws, "tasks", "logs", "2", "-f"]
            var fenv = ProcessInfo.processInfo.environment
            fenv["SO_ROOT"] = RepoPaths.root
            for (k, v) in env { fenv[k] = v }
            follow.environment = fenv
            let out = t.file("follow.out")
            FileManager.default.createFile(atPath: out, contents: nil)
            follow.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            follow.standardError = FileHandle.nullDevice
            try follow.run()
            defer { if follow.isRunning { follow.terminate() } }
            var held = false
            for _ in 0..<240 where !held {
                held = AgentCLIE2E.requests(t).contains { $0["hold"] as? String == "release-held" }
                if !held { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(held, "the CLI never reached the held turn: \(AgentCLIE2E.requests(t))")
            // While it waits: the follower has shown the write the CLI made (read a few times: it polls every 0.5 s).
            var shown = ""
            for _ in 0..<20 {
                shown = (try? t.read("follow.out")) ?? ""
                if shown.contains("partial.txt") { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(follow.isRunning && shown.contains("partial.txt"), "tasks logs -f showed: \(shown)")
            r = try await so(["tasks", "cancel", "2", "-o", "json"])
            said.append(r.stdout + r.stderr)
            let second = AgentCLIE2E.json(r)
            #expect(second["state"] as? String == "cancelled", "\(r.stdout)\n\(r.stderr)")
            #expect(
                (second["files"] as? [[String: Any]])?.map { $0["path"] as? String } == ["partial.txt"],
                "the partial work is committed: \(r.stdout)")
            // TERM reached the CLI, which dropped its connection to the model (the stand-in saw it go).
            var gone = false
            for _ in 0..<20 where !gone {
                gone = AgentCLIE2E.requests(t).contains { $0["event"] as? String == "client went away" }
                if !gone { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(gone, "\(AgentCLIE2E.requests(t))")
            for _ in 0..<20 where follow.isRunning { try await Task.sleep(for: .milliseconds(500)) }
            #expect(!follow.isRunning, "tasks logs -f ended with the task")

            // Every request carried the key from the Secret; the key is nowhere else.
            #expect(!AgentCLIE2E.requests(t).filter { $0["path"] != nil }.contains { $0["key_ok"] as? Bool != true })
            r = try await so(["tasks", "logs", "2"])
            said.append(r.stdout + r.stderr)
            r = try await so(["tasks", "-o", "json"])
            said.append(r.stdout + r.stderr)
            said.append((try? t.read("follow.out")) ?? "")
            r = try await so(["exec", "agent", "--", "sh", "-c", "cat /workspace/.git/so/tasks/*/* 2>/dev/null; env"])
            #expect(r.stdout.contains("ANTHROPIC_API_KEY="), "the container has the key in its environment")
            #expect(!r.stdout.replacingOccurrences(of: "ANTHROPIC_API_KEY=\(key)", with: "").contains(key))
            for text in said { #expect(!text.contains(key), "the API key was printed: \(text)") }
            let spec = try String(contentsOfFile: t.file("home/deployments/\(ws)/spec.yml"), encoding: .utf8)
            let config = try String(contentsOfFile: t.file("home/deployments/\(ws)/config.env"), encoding: .utf8)
            #expect(!spec.contains(key) && !config.contains(key))
            let pods = try await E2E.kubectl(["-n", ws, "get", "pods", "-o", "yaml"])
            #expect(!pods.stdout.contains(key), "the key is in no pod's manifest (a Secret reference only)")
            // The team's page shows the tasks, the real CLI's steps in the task's report (its row, ended, says how
            // many), and never the key.
            let page = try await AgentCLIE2E.page(ws, task: 1, env: env, until: "write hello.txt", in: t)
            #expect(
                page.contains("write hello.txt") && page.contains("Write /workspace/hello.txt"), "\(page.prefix(3000))")
            #expect(
                !page.contains(key) && !page.contains(Data(key.utf8).base64EncodedString()), "the page shows the key")
            let seen = AgentCLIE2E.requests(t)
            print(
                "claude e2e: \(seen.filter { $0["turn"] is Int }.count) main-loop requests, \(seen.filter { $0["turn"] as? String == "side" }.count) side requests; task 1 cost \(cost)"
            )
        }
    }

    @Test(
        .enabled(if: AgentCLIE2E.aider, "SO_E2E_AGENT_WHEELS holds no aider-chat wheels (SO_CI_AIDER=1 downloads them)")
    )
    func aiderEditsAndCommitsThroughTheOpenAIChatAPI() async throws {
        let t = try TempDir("so-e2e-aider")
        defer { t.cleanup() }
        let build = try await AgentCLIE2E.buildImage("aider")
        #expect(build.stdout.contains("aider-chat=="), "\(build.stdout)")
        let key = "sk-e2e-" + (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        // aider's edit format for gpt-4o (its default with an OpenAI key): a SEARCH/REPLACE block; then its commit message.
        let edit = "Creating it.\n\nhello.txt\n```\n<<<<<<< SEARCH\n=======\nhello from aider\n>>>>>>> REPLACE\n```\n"
        let script = "{\"turns\": [\(AgentCLIE2E.turn(["text": edit])), {\"text\": \"add hello.txt\"}]}"
        let (model, url) = try await AgentCLIE2E.serveModel(in: t, script: script, key: key)
        defer { AgentE2E.stop(model) }
        let stack = try AgentE2E.lightStack(in: t, agentImages: true)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "OPENAI_API_KEY": key]
        let ws = "e2e-aider"
        func so(_ args: [String]) async throws -> ProcessResult {
            try await E2E.so(["deployment", "--name", ws] + args, cwd: t.path, env: env)
        }
        try await AgentE2E.removing(ws, t, env) {
            var r = try await E2E.so(
                [
                    "up", stack, "--name", ws, "--agent", "aider", "--config", "GIT_REPO=\(repo)", "--config",
                    "OPENAI_API_BASE=\(url)/v1", "--timeout", "180", "--progress", "plain",
                ], cwd: t.path, env: env)
            #expect(
                r.exitCode == 0
                    && r.stdout.contains("agent image: so-agent-workspace-aider:local (aider's, found on the cluster)"),
                "\(r.stdout)\n\(r.stderr)")
            r = try await so(["task", "create hello.txt"])
            #expect(r.exitCode == 0 && !(r.stdout + r.stderr).contains(key), "\(r.stdout)\n\(r.stderr)")
            r = try await so(["tasks", "show", "1", "-o", "json"])
            let report = AgentCLIE2E.json(r)
            let files = (report["files"] as? [[String: Any]])?.compactMap { $0["path"] as? String } ?? []
            #expect(report["state"] as? String == "succeeded" && files.contains("hello.txt"), "\(r.stdout)")
            #expect(!r.stdout.contains(key))
            // Its cost: aider's own usage report, read from its output.
            let cost = report["cost"] as? [String: Any] ?? [:]
            let logs = try await so(["tasks", "logs", "1"])
            let usage = logs.stdout.split(separator: "\n").filter { $0.contains("Tokens: ") || $0.contains("Cost: $") }
            print("aider e2e: its usage report: \(usage); the task's cost: \(cost)")
            #expect(
                cost["reported"] as? Bool == true && (cost["usd"] as? String).flatMap(Double.init) ?? 0 > 0
                    && !usage.isEmpty, "\(cost) \(usage)")
            #expect(
                try await AgentE2E.run([
                    "git", "--git-dir", t.file("srv/acme/app.git"), "show", "agent/\(ws):hello.txt",
                ]).stdout == "hello from aider\n", "the pushed branch holds the file aider wrote")
            let requests = AgentCLIE2E.requests(t).filter { $0["path"] as? String == "/v1/chat/completions" }
            #expect(!requests.isEmpty && requests.allSatisfy { $0["key_ok"] as? Bool == true }, "\(requests)")
        }
    }
}
