import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// A warm pool on a node that runs containers: ten `so up`s at once in a checkout against a pool of three make
/// ten distinct workspaces (claimed ones and cold ones), and a claimed workspace is a workspace like any other.
@Suite(
    .serialized,
    RealNode.required
)
struct WorkspacePoolE2ETests {
    static let claimersKey = "claimers-key-not-real"

    /// `so up NAME` from the remote `repo` claims a member of `pool` and is its clone, on `agent/NAME`; then the pool
    /// goes. The `up`'s result.
    @discardableResult
    static func claimFromRemote(
        _ name: String, pool: String, stack: String, repo: String, so: ([String]) async throws -> ProcessResult
    ) async throws -> ProcessResult {
        let up = try await so(["up", stack, "--name", name, "--config", "GIT_REPO=\(repo)", "--timeout", "120"])
        var r = up
        #expect(r.exitCode == 0 && r.stdout.contains("claimed \(pool)-"), "\(r.stdout)\n\(r.stderr)")
        r = try await so([
            "deployment", "--name", name, "exec", "agent", "--", "sh", "-c",
            "cd /workspace && git rev-parse --abbrev-ref HEAD && git remote get-url origin && cat README.md",
        ])
        #expect(r.stdout == "agent/\(name)\n\(repo)\nhello\n", "\(r.stdout)\n\(r.stderr)")
        r = try await so(["pool", "remove", pool])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        return up
    }

    /// `pool list -o json` until the pool has `count` warm members (a minute at most): its last answer.
    static func warm(_ pool: String, _ count: Int, so: ([String]) async throws -> ProcessResult) async throws
        -> ProcessResult
    {
        var r = ProcessResult(exitCode: 1)
        var warm = 0
        for _ in 0..<120 where warm < count {
            try await Task.sleep(for: .milliseconds(500))
            r = try await so(["pool", "list", "-o", "json"])
            let pools = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
            warm = pools.first { $0["name"] as? String == pool }?["warm"] as? Int ?? 0
        }
        #expect(warm == count, "pool \(pool): \(r.stdout)\n\(r.stderr)")
        return r
    }
    /// Whose key the container's commands see (never the key itself in the output).
    static let whichKey =
        #"case "${ANTHROPIC_API_KEY:-}" in claimers-key-not-real) echo "the claimer's key" ;; "") echo "no key" ;; *) echo "another key" ;; esac"#

    @Test func tenUpsAgainstAPoolOfThreeMakeTenDistinctWorkspaces() async throws {
        let t = try TempDir("so-e2e-pool")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        _ = try await AgentE2E.run(["git", "clone", "-q", repo, t.file("mine")])
        // Whoever runs these ups has a key of their own; the pool is made by someone with another.
        let env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "ANTHROPIC_API_KEY": Self.claimersKey,
        ]
        let so: @Sendable ([String], String?) async throws -> ProcessResult = { args, cwd in
            try await E2E.so(
                args, cwd: cwd ?? t.path,
                env: args.first == "pool" ? env.merging(["ANTHROPIC_API_KEY": "makers-key-not-real"]) { $1 } : env)
        }
        let names = (0..<10).map { "e2e-pool-\($0)" }
        do { try await body(t, stack: stack, repo: repo, names: names, so: so) } catch {
            for n in names { _ = try? await so(["down", n, "--discard"], nil) }
            _ = try? await so(["pool", "remove", "e2e"], nil)
            throw error
        }
    }

    func body(
        _ t: TempDir, stack: String, repo: String, names: [String],
        so run: @escaping @Sendable ([String], String?) async throws -> ProcessResult
    ) async throws {
        @Sendable func so(_ args: [String], cwd: String? = nil) async throws -> ProcessResult {
            try await run(args, cwd)
        }
        var r = try await so([
            "pool", "create", stack, "--name", "e2e", "--size", "3", "--config", "GIT_ORIGIN=\(repo)",
        ])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        r = try await Self.warm("e2e", 3) { try await so($0) }
        // A member holds no one's key: not its maker's either.
        let pools = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
        let member = try #require(
            (pools.first { $0["name"] as? String == "e2e" }?["members"] as? [[String: Any]])?.first?["name"] as? String)
        r = try await so(["deployment", "--name", member, "exec", "agent", "--", "sh", "-c", Self.whichKey])
        #expect(r.exitCode == 0 && r.stdout == "no key\n", "\(r.stdout)\n\(r.stderr)")

        // Ten at once, in the checkout.
        let ups = try await withThrowingTaskGroup(of: (String, ProcessResult).self) { group in
            for n in names {
                group.addTask {
                    (
                        n,
                        try await so(
                            ["up", stack, "--name", n, "--progress", "plain", "--timeout", "240"], cwd: t.file("mine"))
                    )
                }
            }
            var out: [String: ProcessResult] = [:]
            for try await (n, r) in group { out[n] = r }
            return out
        }
        for (n, r) in ups { #expect(r.exitCode == 0, "\(n): \(r.stdout)\n\(r.stderr)") }
        let claimed = ups.filter { $0.value.stdout.contains("claimed e2e-") }.map(\.key).sorted()
        #expect(claimed.count >= 3, "at least the three warm ones were claimed: \(claimed)")
        print("pool e2e: \(claimed.count) of 10 ups claimed a warm workspace, the others started cold")
        r = try await so(["deployment", "list", "-o", "json"])
        let listed = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
        let mine = listed.filter { names.contains($0["name"] as? String ?? "") }
        let namespaces = Set(mine.compactMap { $0["namespace"] as? String })
        #expect(mine.count == 10 && namespaces.count == 10, "ten workspaces in ten namespaces: \(r.stdout)")
        // The claimed ones are no pool's any more; the members made to refill it say whose they are.
        #expect(
            mine.allSatisfy { $0["pool"] == nil } && listed.contains { $0["pool"] as? String == "e2e" }, "\(r.stdout)")
        // Each has its own branch and the checkout; a claimed one works like any other (a task, then down).
        for n in names {
            r = try await so([
                "deployment", "--name", n, "exec", "agent", "--", "sh", "-c",
                "cd /workspace && git rev-parse --abbrev-ref HEAD && cat README.md",
            ])
            #expect(r.exitCode == 0 && r.stdout == "agent/\(n)\nhello\n", "\(n): \(r.stdout)\n\(r.stderr)")
        }
        let first = try #require(claimed.first)
        // The claimer's key, handed in: what runs in the container sees it, as in a cold one's environment.
        for n in [first] + names.filter({ !claimed.contains($0) }).prefix(1) {
            r = try await so(["deployment", "--name", n, "exec", "agent", "--", "sh", "-c", Self.whichKey])
            #expect(r.exitCode == 0 && r.stdout == "the claimer's key\n", "\(n): \(r.stdout)\n\(r.stderr)")
        }
        r = try await so([
            "deployment", "--name", first, "task", "--no-push", "--command",
            "echo pooled > pooled.txt && git add pooled.txt && git commit -qm pooled", "commit something",
        ])
        #expect(r.exitCode == 0 && r.stdout.contains("1 commit on agent/\(first)"), "\(r.stdout)\n\(r.stderr)")
        r = try await so(["deployment", "--name", first, "push"])
        #expect(r.exitCode == 0, "its origin is the checkout's: \(r.stdout)\n\(r.stderr)")
        #expect(
            try await AgentE2E.run([
                "git", "--git-dir", t.file("srv/acme/app.git"), "log", "-1", "--format=%s", "agent/\(first)",
            ]).stdout == "pooled\n")
        let second = claimed.count > 1 ? claimed[1] : first
        r = try await so([
            "deployment", "--name", second, "task", "--no-push", "--command", Self.whichKey + " > key.txt",
            "say whose key",
        ])
        r = try await so(["deployment", "--name", second, "exec", "agent", "--", "cat", "/workspace/key.txt"])
        #expect(r.stdout == "the claimer's key\n", "a task sees it too: \(r.stdout)\n\(r.stderr)")
        // The pool was refilled by the claims.
        r = try await so(["pool", "list", "-o", "json"])
        let after = ((try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? [])
            .first { $0["name"] as? String == "e2e" }
        #expect((after?["members"] as? [Any])?.count == 3, "\(r.stdout)")
        for n in names {
            r = try await so(["down", n, "--discard"])
            #expect(r.exitCode == 0, "\(n): \(r.stdout)\n\(r.stderr)")
        }
        r = try await so(["pool", "remove", "e2e"])
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        // Nothing of this test's left but namespaces on their way out (down does not wait for them; other suites
        // share the cluster).
        r = try await so(["deployment", "list", "-o", "json"])
        let left = ((try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? [])
            .filter {
                $0["terminating"] as? Bool != true && ($0["directory"] as? String ?? "").hasPrefix(t.file("home"))
            }
        #expect(left.isEmpty, "\(r.stdout)")
    }

    /// A pool is the cluster's: made under one `$SO_HOME`, it is listed under another, whose `up` (with its own copy
    /// of the stack, at another path) claims its member (the workspace's directory made from the member's record)
    /// and whose refill makes the next one; the first home's `pool remove` then removes that member too.
    @Test func aPoolMadeInOneHomeIsClaimedAndRefilledFromAnother() async throws {
        let t = try TempDir("so-e2e-pool-homes")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        // Home B's copy of the same stack, elsewhere.
        try FileManager.default.copyItem(atPath: t.file("layout"), toPath: t.file("layout-b"))
        let stackB = t.file("layout-b/stacks/agent-workspace")
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let envA = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home-a")]
        let envB = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home-b")]
        func a(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: envA) }
        func b(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: envB) }
        let pool = "e2e-homes"
        let ws = "e2e-homes-ws"
        do {
            try await AgentE2E.removing(ws, t, envB) {
                var r = try await a([
                    "pool", "create", stack, "--name", pool, "--size", "1", "--config", "GIT_REPO=\(repo)",
                ])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                let made = try await Self.warm(pool, 1) { try await b($0) }
                #expect(made.stdout.contains("\"\(pool)-"), "home B lists home A's pool and member: \(made.stdout)")
                r = try await b([
                    "up", stackB, "--name", ws, "--config", "GIT_REPO=\(repo)", "--config", "GIT_USER_NAME=Claimer B",
                    "--config", "GIT_USER_EMAIL=b@e2e.invalid", "--timeout", "120",
                ])
                #expect(r.exitCode == 0 && r.stdout.contains("claimed \(pool)-"), "\(r.stdout)\n\(r.stderr)")
                #expect(FileManager.default.fileExists(atPath: t.file("home-b/deployments/\(ws)/spec.yml")))
                // The claimed workspace commits as its claimer (not as whoever made the pool), at once and after a
                // restart (below).
                let check =
                    "cd /workspace && git rev-parse --abbrev-ref HEAD && cat README.md && "
                    + "git commit -q --allow-empty -m by-agent && git log -1 --format='%an <%ae>' && printenv WORKSPACE_NAME"
                r = try await b(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", check])
                #expect(
                    r.stdout.hasPrefix("agent/\(ws)\nhello\nClaimer B <b@e2e.invalid>\n"), "\(r.stdout)\n\(r.stderr)")
                // A, with no directory of it, reaches B's claimed workspace by its name; the claim is a revision.
                r = try await a(["deployment", "--name", ws, "history", "-o", "json"])
                let revisions = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
                #expect(
                    revisions.last?["verb"] as? String == "claim" && revisions.last?["result"] as? String == "claimed",
                    "\(r.stdout)\n\(r.stderr)")
                // A restart renders the workspace's own config, which the claim wrote (its name and identity), and
                // applies the claim's revision.
                r = try await b(["deployment", "--name", ws, "restart", "--timeout", "120"])
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
                r = try await b(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", check])
                #expect(
                    r.stdout == "agent/\(ws)\nhello\nClaimer B <b@e2e.invalid>\n\(ws)\n", "\(r.stdout)\n\(r.stderr)")
                // B's refill (with B's copy of the stack) made the next member; A sees it.
                let refilled = try await Self.warm(pool, 1) { try await a($0) }
                let pools =
                    (try? JSONSerialization.jsonObject(with: Data(refilled.stdout.utf8)) as? [[String: Any]]) ?? []
                let next = try #require(
                    (pools.first { $0["name"] as? String == pool }?["members"] as? [[String: Any]])?.first?["name"]
                        as? String)
                #expect(FileManager.default.fileExists(atPath: t.file("home-b/deployments/\(next)")), "made by B")
                // A removes the pool, B's member with it.
                r = try await a(["pool", "remove", pool])
                #expect(r.exitCode == 0 && r.stdout.contains("pool: removed \(next)"), "\(r.stdout)\n\(r.stderr)")
                r = try await b(["pool", "list", "-o", "json"])
                #expect(!r.stdout.contains("\"\(pool)\""), "\(r.stdout)")
                r = try await b(["deployment", "--name", ws, "status"])
                #expect(r.exitCode == 0, "the claimed workspace is not the pool's: \(r.stdout)\n\(r.stderr)")
            }
        } catch {
            _ = try? await a(["pool", "remove", pool])
            throw error
        }
    }

    /// A workspace from a remote claims a member of a pool made for that repository, and is its clone.
    @Test func aWorkspaceFromARemoteIsClaimedToo() async throws {
        let t = try TempDir("so-e2e-pool-remote")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        func so(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: env) }
        try await AgentE2E.removing("e2e-remote", t, env) {
            var r = try await so([
                "pool", "create", stack, "--name", "remote", "--size", "1", "--config", "GIT_REPO=\(repo)",
            ])
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            r = try await Self.warm("remote", 1) { try await so($0) }
            // Traced: the member (the node's workspace image has python3) was handed its claim through a port-forward
            // to its listener, no exec into it (`handOverForwarded`).
            let up = try await Self.claimFromRemote("e2e-remote", pool: "remote", stack: stack, repo: repo) {
                try await E2E.so(
                    $0, cwd: t.path, env: $0.first == "up" ? env.merging(["SO_TRACE_API": "1"]) { $1 } : env)
            }
            #expect(up.stderr.contains("phase: claim: handed over through a port-forward"), "\(up.stderr)")
            #expect(!up.stderr.contains("api: EXEC "), "\(up.stderr)")
            // The member fetched the pool's repository while it was warm: the claim checked that commit out, fetching
            // nothing (clone.sh says so in the container's log).
            r = try await so(["deployment", "--name", "e2e-remote", "logs"])
            #expect(r.stdout.contains("fetched while the workspace was warm"), "\(r.stdout)\n\(r.stderr)")
        }
    }

    /// A stack whose spec says `workspace: {pool: 1}`: the first `so up` starts cold and makes the pool, the next
    /// claims its member (no `so pool create`).
    @Test func aStackWithAPoolInItsSpecKeepsOneFromUp() async throws {
        let t = try TempDir("so-e2e-pool-spec")
        defer { t.cleanup() }
        let stack = try AgentE2E.lightStack(in: t)
        let stackFile = Path.join(stack, "stack.yml")
        let text = try String(contentsOfFile: stackFile, encoding: .utf8)
        guard text.contains("    agent: claude\n") else { throw SoError("the stack no longer says agent: claude") }
        try text.replacingOccurrences(of: "    agent: claude\n", with: "    agent: claude\n    pool: 1\n")
            .write(toFile: stackFile, atomically: true, encoding: .utf8)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        func so(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: t.path, env: env) }
        // The pool's member goes whatever happens (the workspaces go by `removing`).
        do { try await body() } catch {
            _ = try? await so(["pool", "remove", "agent-workspace"])
            throw error
        }
        func body() async throws {
            try await AgentE2E.removing("e2e-spec-1", t, env) {
                try await AgentE2E.removing("e2e-spec-2", t, env) {
                    var r = try await so([
                        "up", stack, "--name", "e2e-spec-1", "--config", "GIT_REPO=\(repo)", "--timeout", "120",
                    ])
                    #expect(
                        r.exitCode == 0 && r.stdout.contains("pool agent-workspace: 1 warm workspace on the way"),
                        "\(r.stdout)\n\(r.stderr)")
                    r = try await Self.warm("agent-workspace", 1) { try await so($0) }
                    try await Self.claimFromRemote("e2e-spec-2", pool: "agent-workspace", stack: stack, repo: repo) {
                        try await so($0)
                    }
                }
            }
        }
    }
}
