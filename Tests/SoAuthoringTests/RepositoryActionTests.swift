import Foundation
import SoBasics
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring

struct RepoHarness {
    let tmp: TempDir
    let processes = FakeProcessRunner()
    let console = CapturedConsole()
    let ctx: SoContext
    var base: String { tmp.file("repos") }

    init(dryRun: Bool = false, runner: ProcessRunner? = nil) throws {
        tmp = try TempDir("so-repos")
        ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: tmp.path), processes: runner ?? processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console, environment: ["SO_REPO_BASE_DIR": tmp.file("repos")], builtInRoot: nil,
            options: GlobalSettings(dryRun: dryRun))
    }
}

@Suite struct RepositoryActionTests {
    @Test func clonesChecksOutAndReportsStacks() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        let dir = Path.join(h.base, "stacks-repo")
        h.processes.expect(["git", "clone", "--quiet", "https://git.example.org/team/stacks-repo", dir]) {
            try LocalFileSystem().writeText(
                "name: web\npods: []\n", to: Path.join(dir, "stack-orchestrator/stacks/web/stack.yml"))
            try LocalFileSystem().createDirectory(Path.join(dir, ".git"))
        }
        h.processes.expect(["git", "-C", dir, "checkout", "--quiet", "v2"])
        let r = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("git.example.org/team/stacks-repo@v2"))
        #expect(r.state == .cloned)
        #expect(r.stacks.map(\.path) == [Path.join(dir, "stack-orchestrator/stacks/web")])
        #expect(h.processes.unexpected.isEmpty && h.processes.pending.isEmpty)
    }

    @Test func existingCheckoutIsNotClonedAgain() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        let dir = Path.join(h.base, "b")
        try LocalFileSystem().createDirectory(Path.join(dir, ".git"))
        h.processes.expect(["git", "-C", dir, "rev-parse", "--abbrev-ref", "HEAD"], stdout: "main\n")
        h.processes.expect(["git", "-C", dir, "pull", "--ff-only", "--quiet"])
        let r = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b"), pull: true)
        #expect(r.state == .updated)
        #expect(h.processes.unexpected.isEmpty && h.processes.pending.isEmpty)
    }

    @Test func detachedCheckoutSkipsPull() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        let dir = Path.join(h.base, "b")
        try LocalFileSystem().createDirectory(Path.join(dir, ".git"))
        h.processes.expect(["git", "-C", dir, "rev-parse", "--abbrev-ref", "HEAD"], stdout: "HEAD\n")
        h.processes.expect(["git", "-C", dir, "rev-parse", "HEAD"], stdout: "aaaa\n")
        h.processes.expect(["git", "-C", dir, "rev-parse", "--verify", "--quiet", "v1^{commit}"], stdout: "bbbb\n")
        h.processes.expect(["git", "-C", dir, "checkout", "--quiet", "v1"])
        h.processes.expect(["git", "-C", dir, "rev-parse", "--abbrev-ref", "HEAD"], stdout: "HEAD\n")
        _ = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b@v1"), pull: true)
        #expect(h.console.stdout.contains("skipping pull"))
        #expect(h.processes.unexpected.isEmpty && h.processes.pending.isEmpty)
    }

    @Test func existingNonGitDirectoryIsAnError() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        try LocalFileSystem().createDirectory(Path.join(h.base, "b"))
        await #expect(throws: SoError.self) { try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b")) }
        #expect(h.processes.calls.isEmpty)
    }

    @Test func dryRunWithRefRunsNoGit() async throws {
        let h = try RepoHarness(dryRun: true)
        defer { h.tmp.cleanup() }
        let r = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b@v1"))
        #expect(r.state == .wouldClone)
        #expect(h.processes.calls.isEmpty)
        #expect(!h.tmp.exists("repos/b"))
        #expect(h.console.stdout.contains("would clone https://github.com/a/b"))
    }

    @Test func checkOnlyChangesNothing() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        let r = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b@v1"), checkOnly: true)
        #expect(r.state == .wouldClone && h.processes.calls.isEmpty)
    }

    @Test func failedCloneSaysWhyAndLeavesNothing() async throws {
        let h = try RepoHarness()
        defer { h.tmp.cleanup() }
        let dir = Path.join(h.base, "b")
        h.processes.expect(
            ["git", "clone", "--quiet", "git@github.com:a/b.git", dir], exitCode: 128,
            stderr: "Cloning into '\(dir)'...\nfatal: Could not read from remote repository.\n"
        ) {
            try LocalFileSystem().createDirectory(dir)
        }
        do {
            _ = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("a/b"), gitSSH: true)
            Issue.record("expected an error")
        } catch let e as SoError {
            #expect(e.message.contains("fatal: Could not read from remote repository."))
            #expect(e.hint != nil)
        }
        #expect(!LocalFileSystem().exists(dir))
    }

    @Test func repoBaseDirPrecedence() {
        let fs = LocalFileSystem(currentDirectory: "/w")
        func base(_ env: [String: String]) -> String {
            StackLocator(fs: fs, builtInRoot: nil, environment: env, currentDirectory: "/w").repoBaseDir
        }
        #expect(base(["SO_REPO_BASE_DIR": "/a", "CERC_REPO_BASE_DIR": "/b"]) == "/a")
        #expect(base(["CERC_REPO_BASE_DIR": "/b"]) == "/b")
        #expect(base(["CERC_REPO_BASE_DIR": "rel"]) == "/w/rel")
        #expect(base([:]) == Path.join(fs.homeDirectory, "cerc"))
    }

    @Test func setupHonoursIncludeExcludeAndBranches() async throws {
        let h = try RepoHarness(dryRun: true)
        defer { h.tmp.cleanup() }
        try h.tmp.write(
            "s/stacks/x/stack.yml",
            "name: x\nrepos:\n  - github.com/acme/api@v1\n  - acme/web\n  - git.example.org/acme/docs\npods: []\n")
        let stack = try h.ctx.locator.resolve(h.tmp.file("s/stacks/x"), diagnostics: DiagnosticSink())
        let r = try await RepositoryAction(h.ctx).setup(
            stack: stack, include: ["acme/api", "acme/web"], exclude: ["acme/web"], gitSSH: false, pull: false,
            checkOnly: false, branches: ["acme/api@v2"])
        #expect(r.map(\.repository) == ["github.com/acme/api@v2"])
        let none = try h.tmp.write("t/stacks/y/stack.yml", "name: y\npods: []\n")
        _ = none
        let empty = try h.ctx.locator.resolve(h.tmp.file("t/stacks/y"), diagnostics: DiagnosticSink())
        #expect(
            try await RepositoryAction(h.ctx).setup(
                stack: empty, include: [], exclude: [], gitSSH: false, pull: false, checkOnly: false, branches: []
            ).isEmpty)
        #expect(h.ctx.diagnostics.all.contains { $0.message.contains("does not define any repositories") })
    }
}

/// A runner that adds git configuration through the environment (url.<local>.insteadOf).
struct GitRedirectRunner: ProcessRunner {
    let base: LocalProcessRunner
    let extra: [String: String]
    func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        var env = environment ?? ProcessInfo.processInfo.environment
        for (k, v) in extra { env[k] = v }
        return try await base.run(arguments, workingDirectory: workingDirectory, environment: env, timeout: timeout)
    }
    // The other ways: setup-repositories runs git only captured; an unexpected call fails the test.
    func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        Issue.record("attached: \(arguments)")
        return 1
    }
    func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        Issue.record("prompting: \(arguments)")
        return ProcessResult(exitCode: 1, stdout: "", stderr: "")
    }
    func runStreaming(
        _ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?
    ) async throws -> ProcessResult {
        Issue.record("streaming: \(arguments)")
        return ProcessResult(exitCode: 1, stdout: "", stderr: "")
    }
    func runFeeding(_ arguments: [String], input: [UInt8], environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        Issue.record("fed: \(arguments)")
        return ProcessResult(exitCode: 1, stdout: "", stderr: "")
    }
    func runLines(_ arguments: [String], environment: [String: String]?, line: @escaping @Sendable (String) -> Void)
        async throws -> Int32
    {
        Issue.record("lines: \(arguments)")
        return 1
    }
    func spawnDetached(_ arguments: [String], environment: [String: String]?, output: String?) throws -> Int32 {
        Issue.record("detached: \(arguments)")
        return 0
    }
}

@Suite struct RealGitTests {
    /// The argv really works with git: a local repository stands in for a host through insteadOf.
    @Test(.enabled(if: LocalProcessRunner.which("git", path: ProcessInfo.processInfo.environment["PATH"] ?? "") != nil))
    func fetchesFromARealRepository() async throws {
        let src = try TempDir("so-git-src")
        defer { src.cleanup() }
        let git = LocalProcessRunner()
        let env = [
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": src.path,
        ]
        try src.write("work/stack-orchestrator/stacks/demo/stack.yml", "name: demo\npods: []\n")
        for args in [
            ["git", "init", "-q", "-b", "main"], ["git", "add", "."], ["git", "commit", "-q", "-m", "one"],
            ["git", "tag", "v1"],
        ] {
            let r = try await git.run(args, workingDirectory: src.file("work"), environment: env, timeout: 60)
            #expect(r.exitCode == 0, "\(args): \(r.stderr)")
        }
        let redirect = GitRedirectRunner(
            base: git,
            extra: [
                "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "url.\(src.file("work")).insteadOf",
                "GIT_CONFIG_VALUE_0": "https://git.example.invalid/team/demo-repo",
            ])
        let h = try RepoHarness(runner: redirect)
        defer { h.tmp.cleanup() }
        let r = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("git.example.invalid/team/demo-repo@v1"))
        #expect(r.state == .cloned)
        #expect(r.stacks.map(\.name) == ["demo"])
        #expect(h.tmp.exists("repos/demo-repo/stack-orchestrator/stacks/demo/stack.yml"))
        let again = try await RepositoryAction(h.ctx).fetch(
            try RepoLocator.parse("git.example.invalid/team/demo-repo@v1"))
        #expect(again.state == .present)
        do {
            _ = try await RepositoryAction(h.ctx).fetch(try RepoLocator.parse("git.example.invalid/team/missing-repo"))
            Issue.record("expected a clone failure")
        } catch let e as SoError {
            #expect(e.message.contains("cannot clone"))
            #expect(!h.tmp.exists("repos/missing-repo"))
        }
    }
}
