import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy
@testable import SoWorkspace

/// `so up` in a local checkout: the repository carried in as a bundle (streamed through the fake runner
/// into a local directory standing in for the container's /workspace, where the stack's own clone.sh
/// then runs), and the work coming back: log, apply, merge, down --keep/--merge and the question.
struct CarryHarness {
    var w: WorkspaceHarness
    /// The user's checkout (no remote): one commit pushed nowhere, a second local one, an edit and a new file.
    let mine: String
    /// The container's /workspace.
    let container: String

    static func git(_ args: [String], in dir: String) async throws -> String {
        try await GitWorkspace.git(args, in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    init() async throws {
        w = try WorkspaceHarness()
        let h = w.h
        mine = h.path("mine")
        container = h.path("container-workspace")
        try FileManager.default.createDirectory(atPath: container, withIntermediateDirectories: true)
        _ = try await LocalProcessRunner().run(
            ["git", "init", "-q", "-b", "main", mine], workingDirectory: nil, environment: GitWorkspace.env, timeout: 60
        )
        try h.tmp.write("mine/README.md", "hello\n")
        try h.tmp.write("mine/.gitignore", ".env\n")
        _ = try await GitWorkspace.git(["add", "-A"], in: mine)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "first"], in: mine)
        try h.tmp.write("mine/app.txt", "one\n")
        _ = try await GitWorkspace.git(["add", "-A"], in: mine)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "local only"], in: mine)
        try h.tmp.write("mine/README.md", "hello\nedited, not committed\n")
        try h.tmp.write("mine/new.txt", "untracked\n")
        try h.tmp.write("mine/.env", "SECRET=not-carried\n")
        let local = container
        @Sendable func inContainer(_ args: [String]) -> [String]? {
            guard args.first == "kubectl", let dash = args.firstIndex(of: "--"), args[dash + 1] == "sh",
                args[dash + 4] == "so", args[dash + 5] == "/workspace"
            else { return nil }
            var rest = Array(args[(dash + 1)...])
            rest[4] = local
            return rest
        }
        // git here gets what so gives it (a scratch index and object directory for the snapshot).
        h.processes.environmentFallback = { args, given in
            guard args.first == "git" else { return nil }
            var env = GitWorkspace.env
            for (k, v) in given ?? [:] where k.hasPrefix("GIT_") { env[k] = v }
            return try await LocalProcessRunner().run(args, workingDirectory: nil, environment: env, timeout: 60)
        }
        h.processes.fallback = { args in
            guard let rest = inContainer(args) else { return nil }
            return try await LocalProcessRunner().run(
                rest, workingDirectory: nil, environment: GitWorkspace.env, timeout: 60)
        }
        // A workspace's agent pod runs as soon as its Namespace is applied (the carrying waits for it). Not at its
        // Deployment: the carry waits beside the start, on the fixed clock, so its whole timeout passes in no time
        // at all, and a start slowed by a loaded machine (every suite at once) would apply the Deployment too late.
        let cluster = w.cluster
        cluster.afterApply = { json in
            guard json["kind"]?.string == "Namespace", let id = json.labels["app"],
                cluster.object("Pod", "\(id)-agent-abc", namespace: json.name) == nil
            else { return }
            try cluster.seed(AgentPod.running(id: id, namespace: json.name))
        }
        // Credentials handed in go to the container's memory: recorded (`fed`), never written on this host.
        h.processes.feedingFallback = { args, _ in inContainer(args) == nil ? nil : ProcessResult(exitCode: 0) }
        h.processes.streamingFallback = { args, stdin, stdout in
            guard let rest = inContainer(args) else { return nil }
            return try await LocalProcessRunner(environment: GitWorkspace.env).runStreaming(
                rest, stdinFile: stdin, stdoutFile: stdout, environment: GitWorkspace.env, timeout: 60)
        }
    }

    /// `so up` from the checkout, with the workspace's pod made running once its Deployment exists (the
    /// carrying waits for it), then the stack's clone.sh run on the container's directory.
    @discardableResult
    func up(_ name: String = "ws", includeUncommitted: Bool = true) async throws -> UpResult {
        var req = UpRequest(stack: "agent-workspace")
        req.name = name
        req.from = mine
        req.includeUncommitted = includeUncommitted
        req.cluster = w.clusterOptions
        req.timeout = 3600
        req.progress = .plain
        let r = try await UpAction(w.ctx).run(req)
        let script = try RepoPaths.cloneScript().replacingOccurrences(of: "/workspace", with: container)
        var env = GitWorkspace.env
        env["GIT_CARRY"] = "bundle"
        env["WORKSPACE_NAME"] = name
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
        return r
    }

    var dir: String { w.h.path("so-home/deployments/ws") }
}

@Suite(.serialized) struct WorkspaceCarryTests {
    @Test func upInACheckoutCarriesItsHistoryAndUncommittedChangesIn() async throws {
        let c = try await CarryHarness()
        let head = try await CarryHarness.git(["rev-parse", "HEAD"], in: c.mine)
        let r = try await c.up()
        let source = try #require(r.source)
        #expect(
            source.repository == LocalFileSystem().realpath(c.mine) && source.branch == "main" && source.base == head,
            "\(source)")
        #expect(
            source.commits == 2 && source.localCommits == 2 && source.uncommitted == 2 && source.uncommittedCarried
                && source.origin.isEmpty, "\(source)")
        #expect(source.bundleBytes > 0)
        let out = c.w.h.console.stdout
        #expect(
            out.contains("workspace source: \(source.repository) (branch main at \(head.prefix(12)) \"local only\")")
                && out.contains("2 commits of history") && out.contains("2 uncommitted changes"), "\(out)")
        // The config tells the clone to wait for the bundle; nothing of the checkout is in the deployment.
        let config = try c.w.h.read("so-home/deployments/ws/config.env")
        #expect(config.contains("GIT_CARRY=bundle") && !config.contains(c.mine), "\(config)")
        // The workspace: agent/ws at the checkout's HEAD, its local commit there, the edit and the new file uncommitted, .env not.
        #expect(try await CarryHarness.git(["rev-parse", "--abbrev-ref", "HEAD"], in: c.container) == "agent/ws")
        #expect(try await CarryHarness.git(["rev-parse", "HEAD"], in: c.container) == head)
        #expect(try await CarryHarness.git(["log", "--format=%s"], in: c.container) == "local only\nfirst")
        #expect(try await CarryHarness.git(["status", "--porcelain"], in: c.container) == "M README.md\n?? new.txt")
        #expect(
            try c.w.h.read("container-workspace/new.txt") == "untracked\n"
                && !FileManager.default.fileExists(atPath: c.container + "/.env"))
        #expect(
            !FileManager.default.fileExists(atPath: c.container + "/.so-carry"), "the bundle is removed after the clone"
        )
        // The user's checkout is untouched: same HEAD, same changes, no refs or scratch directories left.
        let status = try await CarryHarness.git(["status", "--porcelain"], in: c.mine)
        #expect(status == "M README.md\n?? new.txt", "\(status)")
        #expect(try await CarryHarness.git(["for-each-ref", "--format=%(refname)"], in: c.mine) == "refs/heads/main")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: c.mine + "/.git").filter { $0.hasPrefix(".so-") }
                .isEmpty)
        // What was carried in is not the workspace's work: down has nothing to refuse.
        let s = try await WorkspaceGitAction(c.w.ctx).state(c.dir, cluster: c.w.clusterOptions)
        #expect(s.losses == nil && s.uncommittedSaved && s.ahead == 0, "\(s)")
    }

    /// `so up --dry-run` says what it would use and carry, in the conditional; nothing is carried.
    @Test func aDryRunSaysWhatItWouldCarry() async throws {
        let c = try await CarryHarness()
        var req = UpRequest(stack: "agent-workspace")
        req.name = "dry"
        req.from = c.mine
        req.includeUncommitted = true
        req.cluster = c.w.clusterOptions
        req.dryRun = true
        req.progress = .plain
        _ = try await UpAction(c.w.ctx).run(req)
        let out = c.w.h.console.stdout
        #expect(
            out.contains("would use workspace source: ")
                && out.contains("\n  would carry in: 2 commits of history, 2 uncommitted changes\n"), "\(out)")
        #expect(
            !out.contains("would use carried in") && !out.contains("would use origin")
                && out.contains("\n  origin: none"), "\(out)")
    }

    @Test func applyWritesOnlyTheWorkspacesOwnChangesIntoTheWorkingTree() async throws {
        let c = try await CarryHarness()
        try await c.up()
        // Nothing changed yet: nothing to apply.
        var a = try await WorkspaceReturnAction(c.w.ctx).apply(c.dir, cluster: c.w.clusterOptions, into: c.mine)
        #expect(a.files.isEmpty)
        // The agent commits one file and leaves another change uncommitted.
        try c.w.h.tmp.write("container-workspace/app.txt", "one\ntwo\n")
        _ = try await GitWorkspace.git(["commit", "-q", "-am", "agent: two"], in: c.container)
        try c.w.h.tmp.write("container-workspace/agent.md", "notes\n")
        let log = try await WorkspaceReturnAction(c.w.ctx).log(c.dir, cluster: c.w.clusterOptions)
        #expect(
            log.commits.map(\.subject) == ["agent: two"] && log.branch == "agent/ws"
                && log.uncommitted.contains("?? agent.md"), "\(log)")
        #expect(try await WorkspaceGitAction(c.w.ctx).state(c.dir, cluster: c.w.clusterOptions).losses != nil)
        a = try await WorkspaceReturnAction(c.w.ctx).apply(c.dir, cluster: c.w.clusterOptions, into: c.mine)
        #expect(Set(a.files) == ["app.txt", "agent.md"] && a.commits == 1, "\(a)")
        // Into the working tree, uncommitted, beside the user's own changes (not applied twice).
        #expect(
            try c.w.h.read("mine/app.txt") == "one\ntwo\n" && c.w.h.read("mine/agent.md") == "notes\n"
                && c.w.h.read("mine/README.md") == "hello\nedited, not committed\n")
        #expect(try await CarryHarness.git(["log", "--format=%s"], in: c.mine) == "local only\nfirst")
        #expect(
            try await CarryHarness.git(["for-each-ref", "--format=%(refname)"], in: c.mine) == "refs/heads/main",
            "no refs left behind")
        // Applied work counts as saved.
        #expect(try await WorkspaceGitAction(c.w.ctx).state(c.dir, cluster: c.w.clusterOptions).losses == nil)
        // A change that does not fit leaves the tree untouched and says so.
        try c.w.h.tmp.write("container-workspace/app.txt", "one\ntwo\nthree\n")
        try c.w.h.tmp.write("mine/app.txt", "mine\n")
        do {
            _ = try await WorkspaceReturnAction(c.w.ctx).apply(c.dir, cluster: c.w.clusterOptions, into: c.mine)
            Issue.record("a patch that does not fit was applied")
        } catch let e as SoError {
            #expect(
                e.message.contains("do not apply") && e.message.contains("app.txt")
                    && e.hint?.contains("merge") == true, "\(e.message) \(e.hint ?? "")")
        }
        #expect(try c.w.h.read("mine/app.txt") == "mine\n")
    }

    @Test func mergeBringsTheBranchIntoTheCurrentBranch() async throws {
        let c = try await CarryHarness()
        try await c.up(includeUncommitted: false)
        _ = try await GitWorkspace.git(["checkout", "-q", "--", "README.md"], in: c.mine)
        try FileManager.default.removeItem(atPath: c.mine + "/new.txt")
        try c.w.h.tmp.write("container-workspace/feature.txt", "feature\n")
        _ = try await GitWorkspace.git(["add", "feature.txt"], in: c.container)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "agent: feature"], in: c.container)
        let m = try await WorkspaceReturnAction(c.w.ctx).merge(c.dir, cluster: c.w.clusterOptions, into: c.mine)
        #expect(m.merged && m.branch == "agent/ws" && m.into == "main" && m.commits == 1, "\(m)")
        #expect(
            try await CarryHarness.git(["log", "-1", "--format=%s", "main"], in: c.mine) == "agent: feature",
            "a fast-forward")
        let workspaceHead = try await CarryHarness.git(["rev-parse", "HEAD"], in: c.container)
        #expect(try await CarryHarness.git(["rev-parse", "agent/ws"], in: c.mine) == workspaceHead)
        #expect(try await WorkspaceGitAction(c.w.ctx).state(c.dir, cluster: c.w.clusterOptions).losses == nil)
        // A local agent/ws holding commits the workspace lacks is never moved back.
        _ = try await GitWorkspace.git(["checkout", "-q", "agent/ws"], in: c.mine)
        try c.w.h.tmp.write("mine/x.txt", "x\n")
        _ = try await GitWorkspace.git(["add", "x.txt"], in: c.mine)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "mine on agent/ws"], in: c.mine)
        _ = try await GitWorkspace.git(["checkout", "-q", "main"], in: c.mine)
        try c.w.h.tmp.write("container-workspace/feature.txt", "feature 2\n")
        _ = try await GitWorkspace.git(["commit", "-q", "-am", "agent: more"], in: c.container)
        await #expect(throws: SoError.self) {
            try await WorkspaceReturnAction(c.w.ctx).merge(c.dir, cluster: c.w.clusterOptions, into: c.mine)
        }
        #expect(try await CarryHarness.git(["log", "-1", "--format=%s", "agent/ws"], in: c.mine) == "mine on agent/ws")
    }

    @Test func downKeepLeavesTheBranchAndAsksOrRefusesWithoutAChoice() async throws {
        let c = try await CarryHarness()
        try await c.up(includeUncommitted: false)
        try c.w.h.tmp.write("container-workspace/kept.txt", "kept\n")
        _ = try await GitWorkspace.git(["add", "kept.txt"], in: c.container)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "agent: kept"], in: c.container)
        try c.w.h.tmp.write("container-workspace/left.txt", "left uncommitted\n")
        // No terminal, no choice: refused, naming the work and the choices.
        var req = DownRequest(name: "ws")
        req.cluster = c.w.clusterOptions
        do {
            try await DownAction(c.w.ctx).run(req)
            Issue.record("down removed a workspace holding work without a choice")
        } catch let e as SoError {
            #expect(
                e.message.contains("1 commit on agent/ws not pushed") && e.hint?.contains("so down ws --keep") == true
                    && e.hint?.contains("--discard") == true, "\(e.message) \(e.hint ?? "")")
        }
        // On a terminal it asks; cancelling removes nothing.
        var ctx = c.w.ctx
        let console = CapturedConsole(isTerminal: true)
        console.answers = ["c"]
        ctx.console = console
        await #expect(throws: SoError.self) { try await DownAction(ctx).run(req) }
        #expect(console.questions.first?.contains("ws holds 1 commit on agent/ws") == true, "\(console.questions)")
        #expect(c.w.h.fs.isDirectory(c.dir))
        // --keep: what was left is committed there, the branch comes here, the workspace goes.
        req.choice = .keep
        req.into = c.mine
        try await DownAction(c.w.ctx).run(req)
        #expect(
            try await CarryHarness.git(["log", "--format=%s", "agent/ws"], in: c.mine)
                == "so down --keep: what ws left uncommitted\nagent: kept\nlocal only\nfirst")
        #expect(try await CarryHarness.git(["rev-parse", "--abbrev-ref", "HEAD"], in: c.mine) == "main")
        #expect(!c.w.h.fs.isDirectory(c.dir) && c.w.cluster.object("Namespace", "ws") == nil)
    }

    @Test func theQuestionAtDownCanMerge() async throws {
        let c = try await CarryHarness()
        try await c.up(includeUncommitted: false)
        _ = try await GitWorkspace.git(["checkout", "-q", "--", "README.md"], in: c.mine)
        try c.w.h.tmp.write("container-workspace/merged.txt", "merged\n")
        _ = try await GitWorkspace.git(["add", "merged.txt"], in: c.container)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "agent: merged"], in: c.container)
        var ctx = c.w.ctx
        let console = CapturedConsole(isTerminal: true)
        console.answers = ["m"]
        ctx.console = console
        ctx.fs = LocalFileSystem(currentDirectory: c.mine)
        var req = DownRequest(name: "ws")
        req.cluster = c.w.clusterOptions
        try await DownAction(ctx).run(req)
        #expect(try c.w.h.read("mine/merged.txt") == "merged\n")
        #expect(try await CarryHarness.git(["log", "-1", "--format=%s", "main"], in: c.mine) == "agent: merged")
        #expect(!c.w.h.fs.isDirectory(c.dir))
    }

    @Test func originsLoseTheirCredentialsAndLocalPathsAreNotCarried() {
        #expect(
            WorkspaceSource.carriedOrigin("https://x-access-token:test-token-not-real@github.com/acme/web.git")
                == "https://github.com/acme/web.git")
        #expect(
            WorkspaceSource.carriedOrigin("https://test-token-not-real@github.com/acme/web")
                == "https://github.com/acme/web")
        #expect(
            WorkspaceSource.carriedOrigin("ssh://git:secret@host.example/acme/web") == "ssh://git@host.example/acme/web"
        )
        #expect(WorkspaceSource.carriedOrigin("git@github.com:acme/web.git") == "git@github.com:acme/web.git")
        #expect(WorkspaceSource.carriedOrigin("git://10.0.0.1:9418/acme/web.git") == "git://10.0.0.1:9418/acme/web.git")
        for local in ["/srv/git/web.git", "../web", "./web", "~/web.git", "file:///srv/web.git", "web"] {
            #expect(WorkspaceSource.carriedOrigin(local) == nil, "\(local)")
        }
    }

    @Test func upOutsideACheckoutSaysTheWorkspaceStartsEmptyAndFromMustBeOne() async throws {
        let w = try WorkspaceHarness()
        w.h.processes.fallback = { args in
            args.first == "git" ? ProcessResult(exitCode: 128, stderr: "fatal: not a git repository") : nil
        }
        let r = try await w.up("empty")
        #expect(
            r.source == nil
                && r.note?.contains("is not in a git checkout and GIT_REPO is not set: /workspace starts empty")
                    == true,
            "\(String(describing: r.note))")
        #expect(w.h.console.stdout.contains("/workspace starts empty"))
        var req = UpRequest(stack: "agent-workspace")
        req.name = "other"
        req.from = w.h.path("nowhere")
        req.cluster = w.clusterOptions
        do {
            _ = try await UpAction(w.ctx).run(req)
            Issue.record("--from a directory that is no checkout was accepted")
        } catch let e as SoError {
            #expect(
                e.message == "\(w.h.path("nowhere")) is not in a git checkout" && e.exitCode == SoError.exitUsage,
                "\(e.message)")
        }
        // GIT_REPO and --from contradict each other.
        req.config = ["GIT_REPO=https://github.com/acme/web"]
        await #expect(throws: SoError.self) { _ = try await UpAction(w.ctx).run(req) }
    }
}

@Suite struct AgentTableTests {
    @Test func theAgentChoosesTheTaskTheKeysAndTheHosts() async throws {
        var w = try WorkspaceHarness()
        w.ctx.environment["OPENAI_API_KEY"] = "test-openai-key-not-real"
        var req = UpRequest(stack: "agent-workspace")
        req.name = "cx"
        req.agent = "codex"
        req.config = ["GIT_REPO=https://github.com/acme/web"]
        req.cluster = w.clusterOptions
        req.timeout = 30
        _ = try await UpAction(w.ctx).run(req)
        let dir = w.h.path("so-home/deployments/cx")
        #expect(try w.h.read("so-home/deployments/cx/spec.yml").contains("agent: codex"))
        let model = try DeploymentLoader.load(dir, fs: w.h.fs, diagnostics: DiagnosticSink())
        #expect(model.spec.workspace?.task == #"codex exec --full-auto "$TASK""#)
        #expect(model.spec.secretEnv == ["GITHUB_TOKEN", "GIT_TOKEN", "OPENAI_API_KEY"], "\(model.spec.secretEnv)")
        let egress = model.spec.sections.egress?.entries ?? []
        #expect(egress.contains("api.openai.com") && !egress.contains("api.anthropic.com"), "\(egress)")
        // Only the agent's key went into the Secret.
        let ns = try #require(w.cluster.object("Namespace", "cx"))
        let id = try #require(ns.labels["app.kubernetes.io/instance"])
        let secret = try #require(w.cluster.object("Secret", "\(id)-generated-secrets", namespace: "cx"))
        #expect(
            secret.at("data", "OPENAI_API_KEY")?.string == Data("test-openai-key-not-real".utf8).base64EncodedString())
        #expect(secret.at("data", "ANTHROPIC_API_KEY") == nil)
    }

    @Test func theDefaultIsClaudeAndAnUnknownAgentIsNamed() async throws {
        let w = try WorkspaceHarness()
        try await w.up("cl", config: ["GIT_REPO=https://github.com/acme/web"])
        let model = try DeploymentLoader.load(
            w.h.path("so-home/deployments/cl"), fs: w.h.fs, diagnostics: DiagnosticSink())
        #expect(model.spec.workspace?.agent == "claude" && model.spec.workspace?.task?.hasPrefix("claude -p") == true)
        // Its JSON events, for the cost in every task's report (and rendered as text by tasks logs).
        #expect(model.spec.workspace?.task?.hasSuffix("--output-format stream-json --verbose") == true)
        #expect(
            model.spec.secretEnv.contains("ANTHROPIC_API_KEY")
                && model.spec.sections.egress?.entries.contains("api.anthropic.com") == true)
        var req = UpRequest(stack: "agent-workspace")
        req.name = "nope"
        req.agent = "nope"
        req.cluster = w.clusterOptions
        do {
            _ = try await UpAction(w.ctx).run(req)
            Issue.record("an unknown agent was accepted")
        } catch let e as SoError {
            #expect(
                e.message == "unknown agent 'nope' for agent-workspace"
                    && e.hint?.contains("claude, codex, gemini, aider") == true, "\(e.message) \(e.hint ?? "")")
        }
        #expect(!w.h.fs.isDirectory(w.h.path("so-home/deployments/nope")))
    }

    @Test func aSpecExtendsTheStacksTableAndATaskInTheSpecWins() throws {
        let stack = [
            AgentProfile(
                name: "claude", task: "claude -p \"$TASK\"", secretEnv: ["ANTHROPIC_API_KEY"],
                egress: ["api.anthropic.com"])
        ]
        let text = """
            stack: agent-workspace
            deploy-to: k8s-kind
            secret-env: [GITHUB_TOKEN]
            egress: [github.com]
            agents:
              mine:
                task: mine run "$TASK"
                secret-env: [MINE_KEY]
                egress: [api.mine.example]
            workspace:
              service: agent
              agent: mine
            """
        let root = try #require(try YAMLFile.parse(text, file: "spec.yml"))
        var spec = try AgentTable.resolve(
            try Spec.decode(root, text: text, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
        #expect(
            spec.workspace?.task == "mine run \"$TASK\"" && spec.secretEnv == ["GITHUB_TOKEN", "MINE_KEY"]
                && spec.sections.egress?.entries == ["github.com", "api.mine.example"])
        let withTask = text + "\n  task: my own"
        let root2 = try #require(try YAMLFile.parse(withTask, file: "spec.yml"))
        spec = try AgentTable.resolve(
            try Spec.decode(root2, text: withTask, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
        #expect(spec.workspace?.task == "my own")
        let unknown = text.replacingOccurrences(of: "agent: mine", with: "agent: other")
        let root3 = try #require(try YAMLFile.parse(unknown, file: "spec.yml"))
        do {
            _ = try AgentTable.resolve(
                try Spec.decode(root3, text: unknown, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
            Issue.record("an unknown agent resolved")
        } catch let e as SoError {
            #expect(
                e.message == "unknown agent 'other'" && e.location?.line == 12
                    && e.hint?.contains("claude, mine") == true,
                "\(e.message) \(String(describing: e.location)) \(e.hint ?? "")")
        }
    }
}
