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
    /// The hand-over's exec starts before its bundle is made: a bundle that fails then (here, one nothing can make)
    /// ends the exec at its first read, with nothing written in the container, and the error said is the bundle's.
    @Test func aBundleThatFailsEndsTheExecBeforeItWritesAnything() async throws {
        let c = try await CarryHarness()
        try await c.up()
        let w = try await WorkspaceContainer.open(c.w.ctx, directory: c.dir, cluster: c.w.clusterOptions)
        let carry = try #require(try await CarryIn.find(c.w.ctx, directory: c.mine))
        let before = c.w.h.processes.fed.count
        let error = await #expect(throws: SoError.self) {
            try await w.deliver(carry, { throw SoError("the bundle could not be made") }, ref: "main")
        }
        #expect(error?.message == "the bundle could not be made")
        #expect(c.w.h.processes.fed.count == before + 1, "the exec ran (it was fed nothing)")
        #expect(!FileManager.default.fileExists(atPath: c.container + "/.so-carry"))
    }

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
