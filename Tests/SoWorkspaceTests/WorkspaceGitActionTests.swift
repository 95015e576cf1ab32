import Foundation
import SoBasics
import SoGitHub
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

@Suite(.serialized) struct WorkspaceGitTests {
    @Test func cloneStartsFromTheDefaultBranchAndRecordsIt() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let s = try await WorkspaceGitAction(g.w.ctx).state(g.dir, cluster: g.w.clusterOptions)
        #expect(s.branch == "agent/ws" && s.ref == "trunk" && s.ahead == 0 && s.losses == nil, "\(s)")
        let trunk = try await GitWorkspace.git(["rev-parse", "trunk"], in: g.origin).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(s.base == trunk, "\(s.base) vs \(trunk)")
    }

    /// clone.sh is the agent's entrypoint: the agent's command runs only after a complete clone, which it
    /// marks done for the readiness probe; a failed clone exits with git's message, runs nothing and leaves
    /// no checkout; the next start clones again and a checkout found is kept.
    @Test func theEntrypointRunsTheAgentsCommandOnlyAfterACompleteClone() async throws {
        let g = try await GitWorkspace()
        let t = try TempDir("so-clone-entry")
        defer { t.cleanup() }
        let script = try RepoPaths.cloneScript()
            .replacingOccurrences(of: "/workspace", with: t.file("ws")).replacingOccurrences(
                of: "/tmp/so-clone-done", with: t.file("done"))
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        func entrypoint(_ repo: String) async throws -> ProcessResult {
            var env = GitWorkspace.env
            env["GIT_REPO"] = repo
            env["WORKSPACE_NAME"] = "e"
            return try await LocalProcessRunner().run(
                [
                    "sh", "-c", script, "clone.sh", "sh", "-c",
                    "echo agent runs in $(pwd); git rev-parse --abbrev-ref HEAD",
                ],
                workingDirectory: nil, environment: env, timeout: 60)
        }
        let failed = try await entrypoint("file://\(t.file("missing.git"))")
        #expect(
            failed.exitCode != 0 && !(failed.stdout + failed.stderr).contains("agent runs"),
            "\(failed.stdout)\(failed.stderr)")
        #expect(
            (failed.stdout + failed.stderr).contains("missing.git"),
            "git's own message: \(failed.stdout)\(failed.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: t.file("done"))
                && !FileManager.default.fileExists(atPath: t.file("ws/.git")))

        let cloned = try await entrypoint("file://\(g.origin)")
        #expect(
            cloned.exitCode == 0 && cloned.stdout.hasSuffix("agent runs in \(t.file("ws"))\nagent/e\n"),
            "\(cloned.stdout)\(cloned.stderr)")
        #expect(FileManager.default.fileExists(atPath: t.file("done")))
        let again = try await entrypoint("file://\(g.origin)")
        #expect(
            again.exitCode == 0 && again.stdout.contains("already holds a checkout (agent/e); keeping it"),
            "\(again.stdout)\(again.stderr)")
    }

    @Test func downRefusesWhileWorkIsUnpushedAndSaysWhat() async throws {
        let g = try await GitWorkspace()
        // Not running: cannot be read, so refused.
        await #expect(throws: SoError.self) { try await g.down() }
        try g.podRuns()
        try g.w.h.tmp.write("container-workspace/login.ts", "fixed\n")
        _ = try await GitWorkspace.git(["add", "login.ts"], in: g.checkout)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "fix login"], in: g.checkout)
        try g.w.h.tmp.write("container-workspace/notes.md", "todo\n")
        do {
            try await g.down()
            Issue.record("down removed a workspace holding unpushed work")
        } catch let e as SoError {
            #expect(
                e.message.contains("1 commit on agent/ws not pushed") && e.message.contains("fix login")
                    && e.message.contains("1 uncommitted change (?? notes.md)"), "\(e.message)")
            #expect(e.hint?.contains("--discard") == true)
        }
        #expect(g.w.h.fs.isDirectory(g.dir) && g.w.cluster.object("Namespace", "ws") != nil)

        // push -m commits the rest and pushes: nothing is lost any more.
        let pushed = try await WorkspaceGitAction(g.w.ctx).push(g.dir, cluster: g.w.clusterOptions, message: "notes")
        #expect(pushed.branch == "agent/ws" && pushed.commits == 2 && pushed.committed)
        let remote = try await GitWorkspace.git(["log", "--format=%s", "agent/ws"], in: g.origin).stdout
        #expect(remote == "notes\nfix login\nfirst\n")
        try await g.down()
        #expect(!g.w.h.fs.isDirectory(g.dir))
    }

    /// `stop --delete-volumes` deletes the volume as `down` does, and reads the checkout first the same way;
    /// a plain stop keeps the volume and reads nothing.
    @Test func stopDeletingVolumesRefusesWhileWorkIsUnpushed() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        try g.w.h.tmp.write("container-workspace/notes.md", "todo\n")
        do {
            try await StopAction(g.w.ctx).run(
                StopRequest(
                    directory: g.dir, cluster: g.w.clusterOptions, deleteVolumes: true,
                    volumeGuard: WorkGuard.stop(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions)))
            Issue.record("stop --delete-volumes deleted a workspace volume holding uncommitted work")
        } catch let e as SoError {
            #expect(e.message == "ws holds work that would be lost: 1 uncommitted change (?? notes.md)", "\(e.message)")
            #expect(
                e.hint?.contains("so deployment --dir \(g.dir) push") == true
                    && e.hint?.contains("stop --delete-volumes --discard") == true, "\(e.hint ?? "")")
        }
        #expect(g.w.cluster.all.contains { $0.0.type.kind == "PersistentVolumeClaim" })
        try await StopAction(g.w.ctx).run(
            StopRequest(
                directory: g.dir, cluster: g.w.clusterOptions, deleteVolumes: true, discard: true,
                volumeGuard: WorkGuard.stop(g.w.ctx, directory: g.dir, cluster: g.w.clusterOptions)))
        #expect(!g.w.cluster.all.contains { $0.0.type.kind == "PersistentVolumeClaim" })
    }

    /// `exec -- CMD` on a workspace names no service: the workspace's own container runs CMD, whole; a word that
    /// is one of the stack's services still names that service.
    @Test func execOnAWorkspaceDefaultsToItsOwnService() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let prefix = [
            "kubectl", "--kubeconfig", g.w.h.path("kubeconfig"), "--context", "kind-test", "-n", "ws", "exec",
            "\(g.id)-agent-abc", "-c", "agent",
            "--",
        ]
        g.w.h.processes.expect(prefix + HandedCredentials.wrap(["cat", "/etc/hosts"]), exitCode: 4)
        let code = try await ObserveAction(g.w.ctx).exec(
            g.dir, cluster: g.w.clusterOptions, service: "cat", command: ["/etc/hosts"], interactive: false, tty: false)
        #expect(code == 4)
        g.w.h.processes.expect(prefix + HandedCredentials.wrap(["git", "status"]))
        #expect(
            try await ObserveAction(g.w.ctx).exec(
                g.dir, cluster: g.w.clusterOptions, service: "agent", command: ["git", "status"], interactive: false,
                tty: false) == 0)
        #expect(g.w.h.processes.pending.isEmpty)
    }

    @Test func discardRemovesItAnyway() async throws {
        let g = try await GitWorkspace()
        try g.w.h.tmp.write("container-workspace/scratch.txt", "x\n")
        try await g.down(discard: true)
        #expect(!g.w.h.fs.isDirectory(g.dir))
    }

    /// A container between two crashes (its clone keeps failing) is listed running but cannot be exec'd into:
    /// `--discard` removes it all the same, saying the checkout went unread; without it, down refuses naming why.
    @Test func aCheckoutThatCannotBeReadIsDiscardedUnreadOrRefused() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        let fallback = g.w.h.processes.fallback
        g.w.h.processes.fallback = { args in
            if args.first == "kubectl" && args.contains("exec") {
                return ProcessResult(
                    exitCode: 1, stderr: "error: unable to upgrade connection: container not found (\"agent\")")
            }
            return try await fallback?(args)
        }
        await #expect {
            try await g.down()
        } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("cannot tell whether ws holds work that is not pushed: reading the checkout in ws failed")
                && m.contains("container not found")
        }
        #expect(g.w.h.fs.isDirectory(g.dir))
        try await g.down(discard: true)
        #expect(!g.w.h.fs.isDirectory(g.dir))
        #expect(
            g.w.ctx.diagnostics.all.contains { $0.message.contains("discarding the checkout of ws unread") },
            "\(g.w.ctx.diagnostics.all.map(\.message))")
    }

    @Test func fetchBringsTheBranchIntoALocalCloneAndCountsAsSaved() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        try g.w.h.tmp.write("container-workspace/a.txt", "agent work\n")
        _ = try await GitWorkspace.git(["add", "a.txt"], in: g.checkout)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "agent work"], in: g.checkout)
        let mine = g.w.h.path("mine")
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", g.origin, mine], workingDirectory: nil, environment: GitWorkspace.env, timeout: 60)
        let r = try await WorkspaceGitAction(g.w.ctx).fetch(
            g.dir, cluster: g.w.clusterOptions, into: mine, localBranch: nil, force: false)
        #expect(r.branch == "agent/ws" && r.commits == 1 && r.repository == LocalFileSystem().realpath(mine))
        #expect(
            try await GitWorkspace.git(["log", "--format=%s", "agent/ws"], in: mine).stdout == "agent work\nfirst\n")
        // Not pushed, but fetched: down has nothing to refuse.
        #expect(try await WorkspaceGitAction(g.w.ctx).state(g.dir, cluster: g.w.clusterOptions).losses == nil)
        // Not a repository: said so.
        await #expect(throws: SoError.self) {
            try await WorkspaceGitAction(g.w.ctx).fetch(
                g.dir, cluster: g.w.clusterOptions, into: g.w.h.path("so-home"), localBranch: nil, force: false)
        }
    }

    @Test func diffIsAPatchThatAppliesOnTheBase() async throws {
        let g = try await GitWorkspace()
        try g.podRuns()
        try g.w.h.tmp.write("container-workspace/README.md", "hello\nworld\n")
        _ = try await GitWorkspace.git(["commit", "-q", "-am", "more"], in: g.checkout)
        try g.w.h.tmp.write("container-workspace/new.txt", "brand new\n")
        let (s, patch) = try await WorkspaceGitAction(g.w.ctx).diff(g.dir, cluster: g.w.clusterOptions, stat: false)
        #expect(patch.contains("+world") && patch.contains("new file mode") && patch.contains("+brand new"), "\(patch)")
        // The workspace's own index is untouched: new.txt is still untracked there.
        #expect(try await GitWorkspace.git(["status", "--porcelain"], in: g.checkout).stdout == "?? new.txt\n")
        let copy = g.w.h.path("copy")
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", g.origin, copy], workingDirectory: nil, environment: GitWorkspace.env, timeout: 60)
        _ = try await GitWorkspace.git(["checkout", "-q", s.base], in: copy)
        try g.w.h.tmp.write("work.patch", patch)
        _ = try await GitWorkspace.git(["apply", g.w.h.path("work.patch")], in: copy)
        #expect(try g.w.h.read("copy/new.txt") == "brand new\n" && g.w.h.read("copy/README.md") == "hello\nworld\n")
    }

    @Test func taskRunsHeadlessCommitsPushesAndOpensAPullRequest() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        let web = FakeWeb()
        web.answers = [
            WebResponse(
                status: 201, body: Data(#"{"number": 7, "html_url": "https://github.example/acme/web/pull/7"}"#.utf8))
        ]
        g.w.ctx.web = web
        g.w.ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        g.w.ctx.environment["GITHUB_API_URL"] = "http://127.0.0.1:9/api/v3/"
        // GitHub's path for the pull request comes from the origin URL.
        try await g.originOnGitHub()
        var req = TaskRequest(directory: g.dir, text: "write the answer\nin answer.txt")
        req.command = #"printf '%s\n' "$TASK" > answer.txt; exit 3"#
        req.cluster = g.w.clusterOptions
        req.pullRequest = true
        let r = try await TaskAction(g.w.ctx, forge: GitHubTaskForge()).run(req)
        #expect(r.exitCode == 3 && r.commits == 1 && r.committedLeftovers && r.pushed && r.pullRequest == nil)
        #expect(web.requests.isEmpty, "no pull request for a failed task")
        #expect(
            try await GitWorkspace.git(["show", "agent/ws:answer.txt"], in: g.origin).stdout
                == "write the answer\nin answer.txt\n")
        #expect(
            try await GitWorkspace.git(["log", "-1", "--format=%s", "agent/ws"], in: g.origin).stdout
                == "so task: write the answer\n")

        req.command = #"echo more >> answer.txt"#
        let ok = try await TaskAction(g.w.ctx, forge: GitHubTaskForge()).run(req)
        #expect(ok.exitCode == 0 && ok.pullRequest == "https://github.example/acme/web/pull/7" && ok.commits == 2)
        let post = try #require(web.requests.first)
        #expect(post.method == "POST" && post.url == "http://127.0.0.1:9/api/v3/repos/acme/web/pulls")
        #expect(post.headers.contains { $0 == ("Authorization", "Bearer test-github-token-not-real") })
        let body = try JSON.parse(try #require(post.body))
        #expect(
            body["head"]?.string == "agent/ws" && body["base"]?.string == "trunk"
                && body["title"]?.string == "write the answer")
        #expect(
            !g.w.h.console.stdout.contains("test-github-token") && !g.w.h.console.stderr.contains("test-github-token"))
    }

    @Test func aTaskInACheckoutWithoutOriginSucceedsAndSaysWhereTheWorkIs() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        _ = try await GitWorkspace.git(["remote", "remove", "origin"], in: g.checkout)
        var req = TaskRequest(directory: g.dir, text: "write the answer")
        req.command = #"echo 42 > answer.txt"#
        req.cluster = g.w.clusterOptions
        let r = try await TaskAction(g.w.ctx).run(req)
        #expect(r.exitCode == 0 && r.commits == 1 && !r.pushed, "\(r)")
        let said = g.w.h.console.stdout + g.w.h.console.stderr
        #expect(said.contains("has no origin") && said.contains("fetch") && said.contains("apply"), "\(said)")
        // --pr there is refused before the agent runs: nothing is queued, nothing written.
        req.pullRequest = true
        req.command = #"echo 43 > refused.txt"#
        do {
            _ = try await TaskAction(g.w.ctx).run(req)
            Issue.record("a pull request without an origin was accepted")
        } catch let e as SoError {
            #expect(
                e.message == "ws's checkout has no origin: a pull request needs one"
                    && e.hint?.contains("fetch") == true)
        }
        await #expect(throws: SoError.self) { try await TaskQueueAction(g.w.ctx).submit(req) }
        #expect(!FileManager.default.fileExists(atPath: g.checkout + "/refused.txt"))
        #expect(try await TaskQueueAction(g.w.ctx).list(g.dir, cluster: g.w.clusterOptions).count == 1)
    }

    @Test func anExistingPullRequestIsFoundAndRefusalsAreNamed() async throws {
        var g = try await GitWorkspace()
        try g.podRuns()
        let web = FakeWeb()
        web.answers = [
            WebResponse(
                status: 422,
                body: Data(
                    #"{"message": "Validation Failed", "errors": [{"message": "A pull request already exists for acme:agent/ws."}]}"#
                        .utf8)),
            WebResponse(status: 200, body: Data(#"[{"html_url": "https://github.com/acme/web/pull/3"}]"#.utf8)),
            WebResponse(status: 403, body: Data(#"{"message": "Resource not accessible by integration"}"#.utf8)),
        ]
        g.w.ctx.web = web
        g.w.ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        let forge = GitHubTaskForge()
        #expect(
            try await forge.openPullRequest(
                origin: "git@github.com:acme/web.git", head: "agent/ws", base: "trunk", title: "t", body: "b", g.w.ctx)
                == "https://github.com/acme/web/pull/3")
        #expect(web.requests[1].url == "https://api.github.com/repos/acme/web/pulls?state=open&head=acme:agent/ws")
        do {
            _ = try await forge.openPullRequest(
                origin: "https://github.com/acme/web", head: "agent/ws", base: "trunk", title: "t", body: "b", g.w.ctx)
            Issue.record("a refused pull request passed")
        } catch let e as SoError {
            #expect(
                e.message.contains("Resource not accessible by integration")
                    && e.hint?.contains("pull-requests: write") == true)
        }
        g.w.ctx.environment["GITHUB_TOKEN"] = nil
        var req = TaskRequest(directory: g.dir, text: "x")
        req.pullRequest = true
        req.cluster = g.w.clusterOptions
        await #expect(throws: SoError.self) { try await TaskAction(g.w.ctx, forge: GitHubTaskForge()).run(req) }
    }

    @Test func gitHubRepositoriesAreReadFromEveryRemoteForm() {
        for url in [
            "https://github.com/acme/web", "https://github.com/acme/web.git", "git@github.com:acme/web.git",
            "ssh://git@github.com/acme/web",
            "git://10.250.0.1:9418/acme/web.git", "https://x-access-token@github.com/acme/web/",
        ] {
            #expect(GitHubRepository(url: url) == GitHubRepository(url: "https://github.com/acme/web"), "\(url)")
            #expect(GitHubRepository(url: url)?.owner == "acme" && GitHubRepository(url: url)?.name == "web")
        }
        #expect(GitHubRepository(url: "/srv/web.git") == nil && GitHubRepository(url: "https://github.com/web") == nil)
    }

    @Test func theAgentCommitsAsTheInvokingUser() async throws {
        var w = try WorkspaceHarness()
        w.h.processes.expect(
            ["git", "config", "--get-regexp", "^user\\.(name|email)$"],
            stdout: "user.name Ada Lovelace\nuser.email ada@example.org\n")
        try await w.up("who")
        let config = try w.h.read("so-home/deployments/who/config.env")
        #expect(
            config.contains("GIT_USER_NAME='Ada Lovelace'") && config.contains("GIT_USER_EMAIL=ada@example.org"),
            "\(config) \(w.h.processes.calls.map(\.arguments))")
        // --config wins, and then git's config is not asked (only whether the directory is a checkout).
        w = try WorkspaceHarness()
        try await w.up("who2", config: ["GIT_USER_NAME=CI", "GIT_USER_EMAIL=ci@example.org"])
        #expect(
            !w.h.processes.calls.contains { $0.arguments.first == "git" && $0.arguments.contains("config") },
            "\(w.h.processes.calls.map(\.arguments))")
    }
}
