import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// A count shared with a cluster hook.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    var value: Int { lock.withLock { n } }
    func next() -> Int {
        lock.withLock {
            n += 1
            return n
        }
    }
}

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
        // The container's memory (/dev/shm: the credentials a claim hands in, the use marker), a directory here.
        let shm = h.path("container-shm")
        try FileManager.default.createDirectory(atPath: shm, withIntermediateDirectories: true)
        @Sendable func inContainer(_ args: [String]) -> [String]? {
            guard args.first == "kubectl", let dash = args.firstIndex(of: "--"), args[dash + 1] == "sh",
                args[dash + 4] == "so", args[dash + 5] == "/workspace"
            else { return nil }
            var rest = Array(args[(dash + 1)...])
            rest[2] = rest[2].replacingOccurrences(of: "/dev/shm/", with: shm + "/")
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
        // What a script is fed runs here (the container's memory pointed into `shm`): a claim's hand-over from a remote
        // (what it reads first on its stdin: where the remote's branch is, `RemoteTip`; then the credentials), the
        // credentials handed to a running workspace.
        h.processes.feedingFallback = { args, input in
            guard let rest = inContainer(args) else { return nil }
            return try await LocalProcessRunner().runFeeding(
                rest, input: input, environment: GitWorkspace.env, timeout: 60)
        }
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
        let script = try cloneScript()
        var env = GitWorkspace.env
        env["GIT_CARRY"] = "bundle"
        env["WORKSPACE_NAME"] = name
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
        return r
    }

    var dir: String { w.h.path("so-home/deployments/ws") }

    /// The container's memory (/dev/shm), a directory here: what a claim handed in is read there.
    var shm: String { w.h.path("container-shm") }

    /// The stack's clone.sh as this harness's container runs it: its /workspace the harness's directory, and the
    /// FIFO a claim's exec waits on (made as the clone waits for its repository) beside it, not in this host's /tmp.
    func cloneScript() throws -> String {
        try RepoPaths.cloneScript().replacingOccurrences(of: "/workspace", with: container)
            .replacingOccurrences(of: "/tmp/so-claim-wait", with: w.h.path("so-claim-wait"))
    }

    /// `so up agent-workspace --name NAME --config GIT_REPO=REPO --no-wait` on the harness's cluster (a claim from a
    /// remote, where a pool fits).
    func remoteUp(_ name: String, repo: String) -> UpRequest {
        var req = UpRequest(stack: "agent-workspace")
        req.name = name
        req.config = ["GIT_REPO=\(repo)"]
        req.cluster = w.clusterOptions
        req.wait = false
        return req
    }

    /// A bare clone of the checkout (`origin.git`), for a workspace from a remote: its path.
    func origin() async throws -> String {
        let origin = w.h.path("origin.git")
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", "--bare", mine, origin], workingDirectory: nil, environment: GitWorkspace.env,
            timeout: 60)
        return origin
    }
}

/// A workspace on the fake cluster whose container is a local directory: `kubectl exec … -- sh -c SCRIPT so
/// /workspace ARGS` runs SCRIPT here with the local checkout in place of /workspace, so the git scripts
/// (and clone.sh itself) run for real against a local origin whose default branch is `trunk`.
struct GitWorkspace {
    var w: WorkspaceHarness
    let origin: String
    let checkout: String
    let id: String

    static func git(_ args: [String], in dir: String) async throws -> ProcessResult {
        let r = try await LocalProcessRunner().run(
            ["git", "-C", dir] + args, workingDirectory: nil, environment: Self.env, timeout: 60)
        if r.exitCode != 0 { throw SoError("git \(args.joined(separator: " ")): \(r.stderr)") }
        return r
    }
    static var env: [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["GIT_AUTHOR_NAME"] = "t"
        e["GIT_AUTHOR_EMAIL"] = "t@example.invalid"
        e["GIT_COMMITTER_NAME"] = "t"
        e["GIT_COMMITTER_EMAIL"] = "t@example.invalid"
        e["GIT_CONFIG_NOSYSTEM"] = "1"
        e["HOME"] = e["TMPDIR"] ?? "/tmp"
        return e
    }

    init(name: String = "ws") async throws {
        w = try WorkspaceHarness()
        let h = w.h
        // origin: a bare repository whose default branch is trunk, with one commit.
        origin = h.path("origin.git")
        let seed = h.path("seed")
        _ = try await LocalProcessRunner().run(
            ["git", "init", "-q", "-b", "trunk", seed], workingDirectory: nil, environment: Self.env, timeout: 60)
        try h.tmp.write("seed/README.md", "hello\n")
        _ = try await Self.git(["add", "-A"], in: seed)
        _ = try await Self.git(["commit", "-q", "-m", "first"], in: seed)
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", "--bare", seed, origin], workingDirectory: nil, environment: Self.env, timeout: 60)
        try await w.up(name, config: ["GIT_REPO=file://\(origin)"])
        let ns = try #require(w.cluster.object("Namespace", name))
        id = try #require(ns.labels["app.kubernetes.io/instance"])
        // The checkout, made by the stack's own clone.sh (its /workspace pointed here).
        checkout = h.path("container-workspace")
        try FileManager.default.createDirectory(atPath: checkout, withIntermediateDirectories: true)
        let script = try RepoPaths.cloneScript().replacingOccurrences(of: "/workspace", with: checkout)
        var env = Self.env
        env["GIT_REPO"] = "file://\(origin)"
        env["WORKSPACE_NAME"] = name
        let clone = try await LocalProcessRunner().run(
            ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
        #expect(clone.exitCode == 0, "\(clone.stdout)\(clone.stderr)")
        let local = checkout
        h.processes.fallback = { args in
            if args.first == "git" {
                return try await LocalProcessRunner().run(
                    args, workingDirectory: nil, environment: Self.env, timeout: 60)
            }
            guard args.first == "kubectl", let dash = args.firstIndex(of: "--"), args[dash + 1] == "sh",
                args[dash + 4] == "so", args[dash + 5] == "/workspace"
            else { return nil }
            var rest = Array(args[(dash + 1)...])
            rest[4] = local
            var r = try await LocalProcessRunner().run(rest, workingDirectory: nil, environment: Self.env, timeout: 60)
            // As kubectl exec ends a command that failed.
            if r.exitCode != 0 { r.stderr += "command terminated with exit code \(r.exitCode)\n" }
            return r
        }
        // A bundle streamed out of the container (kubectl exec's stdout into a file).
        h.processes.streamingFallback = { args, stdin, stdout in
            guard args.first == "kubectl", let dash = args.firstIndex(of: "--"), args[dash + 5] == "/workspace" else {
                return nil
            }
            var rest = Array(args[(dash + 1)...])
            rest[4] = local
            return try await LocalProcessRunner().runStreaming(
                rest, stdinFile: stdin, stdoutFile: stdout, environment: Self.env, timeout: 60)
        }
    }

    /// The pod the Deployment would run, with the agent container running.
    func podRuns(_ name: String = "ws") throws {
        try w.cluster.seed(AgentPod.running(id: id, namespace: name))
    }

    /// The checkout's origin reads as a GitHub repository (acme/web, for the API's paths), while pushes go to the
    /// local origin.
    func originOnGitHub() async throws {
        _ = try await Self.git(["remote", "set-url", "origin", "https://github.example/acme/web.git"], in: checkout)
        _ = try await Self.git(["remote", "set-url", "--push", "origin", origin], in: checkout)
    }

    var dir: String { w.h.path("so-home/deployments/ws") }
    func down(discard: Bool = false) async throws {
        var req = DownRequest(name: "ws")
        req.cluster = w.clusterOptions
        req.discard = discard
        try await DownAction(w.ctx).run(req)
    }
}

/// `so up` / `down` / `cleanup` / `deployment list` against the stateful fake cluster.
struct WorkspaceHarness {
    let h: Harness
    let cluster = FakeCluster()
    var ctx: SoContext
    let clock: FixedClock

    init() throws {
        h = try Harness(environment: [:])
        let cluster = self.cluster
        cluster.onApply = { json in
            guard case .object(var o) = json, o["kind"]?.string == "Deployment" else { return }
            if case .object(var meta)? = o["metadata"] {
                meta["generation"] = .number(1)
                o["metadata"] = .object(meta)
            }
            o["status"] = .object([
                "observedGeneration": .number(1), "updatedReplicas": .number(1), "availableReplicas": .number(1),
            ])
            json = .object(o)
        }
        var ctx = h.ctx
        ctx.environment = ["SO_HOME": h.path("so-home"), "ANTHROPIC_API_KEY": "test-anthropic-key-not-real"]
        ctx.connect = { _ in cluster }
        ctx.hostName = "laptop"
        clock = ctx.clock as! FixedClock
        self.ctx = ctx
        // The invoking user has no git identity unless a test scripts one.
        // Nor is the test's directory a git checkout (so up there starts an empty workspace).
        h.processes.fallback = { args in
            if args.starts(with: ["git", "config"]) { return ProcessResult(exitCode: 1) }
            if args.first == "git", args.contains("rev-parse") {
                return ProcessResult(exitCode: 128, stderr: "fatal: not a git repository")
            }
            return nil
        }
        try h.tmp.write("kubeconfig", ClusterHarness.kubeconfigText)
    }

    var clusterOptions: ClusterOptions {
        ClusterOptions(kubeconfig: h.path("kubeconfig"), performClusterManagement: false)
    }

    @discardableResult
    func up(_ name: String, ttl: Double? = nil, with: [String]? = nil, config: [String] = []) async throws -> UpResult {
        var req = UpRequest(stack: "agent-workspace")
        req.name = name
        req.ttl = ttl
        req.with = with
        req.config = config
        req.cluster = clusterOptions
        req.timeout = 30
        req.progress = .plain
        return try await UpAction(ctx).run(req)
    }

    func labelled(_ selector: String = "app.kubernetes.io/managed-by=so") -> [String] {
        cluster.all.filter { FakeCluster.matches($0.1.labels, selector: selector) }.map {
            "\($0.0.type.kind) \($0.1.name)"
        }
    }
}
