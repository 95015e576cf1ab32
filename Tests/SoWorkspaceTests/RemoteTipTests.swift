import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoWorkspace

/// Where a claim's branch is, asked by `so` as the claim begins (`RemoteTip`): what `git ls-remote` answers, read;
/// only remotes that reach nothing of this machine asked, with no prompt and no credential helper.
@Suite struct RemoteTipTests {
    static let commit = String(repeating: "ab", count: 20)

    static func context(_ runner: FakeProcessRunner) throws -> SoContext {
        let t = try TempDir("so-remote-tip")
        return SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: runner, clock: FixedClock(),
            entropy: SeededEntropy(), console: CapturedConsole(), environment: ["PATH": "/usr/bin", "HOME": t.path],
            builtInRoot: nil)
    }

    @Test func theDefaultBranchIsTheOneHEADNames() {
        let answer = "ref: refs/heads/trunk\tHEAD\n\(Self.commit)\tHEAD\n"
        #expect(RemoteTip.parse(answer, ref: "") == RemoteTip(commit: Self.commit, branch: "trunk"))
        // A detached HEAD names no branch: nothing is said.
        #expect(RemoteTip.parse("\(Self.commit)\tHEAD\n", ref: "") == nil)
        #expect(
            RemoteTip.parse("\(Self.commit)\trefs/heads/side\n", ref: "side")
                == RemoteTip(commit: Self.commit, branch: "side"))
        // Another ref's line, a short or non-hex commit, or nothing: nothing.
        #expect(RemoteTip.parse("\(Self.commit)\trefs/heads/other\n", ref: "side") == nil)
        #expect(RemoteTip.parse("abc\trefs/heads/side\n", ref: "side") == nil)
        #expect(RemoteTip.parse("\(String(repeating: "zz", count: 20))\trefs/heads/side\n", ref: "side") == nil)
        #expect(RemoteTip.parse("", ref: "side") == nil)
        #expect(RemoteTip.line(RemoteTip(commit: Self.commit, branch: "trunk")) == "\(Self.commit) trunk\n")
        #expect(RemoteTip.line(nil) == "\n")
    }

    /// The repository a pool's members fetch while they wait, as clone.sh picks it.
    @Test func theWarmURLIsTheOriginElseTheRepository() {
        #expect(RemoteTip.warmURL(["GIT_ORIGIN=git://a/x", "GIT_REPO=git://b/y"]) == "git://a/x")
        #expect(RemoteTip.warmURL(["GIT_ORIGIN=", "GIT_REPO=git://b/y=z"]) == "git://b/y=z")
        #expect(RemoteTip.warmURL(["LOG_LEVEL=debug"]) == nil)
    }

    /// A local path, file://, ssh and git's ext:: transport run nothing here (the fake runner fails on any call).
    @Test func onlyNetworkRemotesAreAsked() async throws {
        let runner = FakeProcessRunner()
        let ctx = try Self.context(runner)
        for repo in [
            "/srv/app.git", "file:///srv/app.git", "ssh://git@host/app.git", "git@host:app.git", "ext::sh -c id",
            "../app",
        ] {
            #expect(await RemoteTip.ask(ctx, repo: repo, ref: "") == nil, "\(repo)")
        }
        // A ref that reads as an option, or with a space, is not asked either.
        #expect(await RemoteTip.ask(ctx, repo: "https://example.invalid/app.git", ref: "--upload-pack=x") == nil)
        #expect(await RemoteTip.ask(ctx, repo: "https://example.invalid/app.git", ref: "a b") == nil)
        #expect(runner.calls.isEmpty && runner.unexpected.isEmpty, "\(runner.calls.map(\.arguments))")
    }

    /// git is asked with only network transports allowed, no credential helper and no prompt; a failure is nothing.
    @Test func theAskPromptsForNothingAndFailsQuietly() async throws {
        let runner = FakeProcessRunner()
        let ctx = try Self.context(runner)
        let protocols = [
            "-c", "protocol.allow=never", "-c", "protocol.git.allow=always", "-c", "protocol.http.allow=always", "-c",
            "protocol.https.allow=always", "-c", "credential.helper=", "-c", "core.askPass=true", "ls-remote",
        ]
        runner.expect(
            ["git"] + protocols + ["https://example.invalid/app.git", "refs/heads/side"],
            stdout: "\(Self.commit)\trefs/heads/side\n")
        runner.expect(["git"] + protocols + ["--symref", "git://example.invalid/app.git", "HEAD"], exitCode: 128)
        #expect(
            await RemoteTip.ask(ctx, repo: "https://example.invalid/app.git", ref: "side")
                == RemoteTip(commit: Self.commit, branch: "side"))
        #expect(await RemoteTip.ask(ctx, repo: "git://example.invalid/app.git", ref: "") == nil)
        #expect(runner.unexpected.isEmpty && runner.pending.isEmpty, "\(runner.unexpected) \(runner.pending)")
        for env in runner.environments {
            #expect(env?["GIT_TERMINAL_PROMPT"] == "0" && env?["GIT_ASKPASS"] == "true" && env?["HOME"] != nil)
        }
    }
}

/// A claim from a remote hands its member where the branch is, as `so` asked it while it claimed: the hand-over's
/// exec (run here on the harness's stand-in for /workspace) reads it on its stdin and writes it into the ready file.
@Suite(.serialized) struct RemoteTipClaimTests {
    @Test func aClaimFromARemoteHandsItsMemberWhereTheBranchIs() async throws {
        let c = try await CarryHarness()
        let origin = try await c.origin()
        let port = 20000 + Int.random(in: 0..<9000)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        daemon.arguments = [
            "git", "daemon", "--base-path=\(Path.dirname(origin))", "--export-all", "--reuseaddr",
            "--listen=127.0.0.1", "--port=\(port)", Path.dirname(origin),
        ]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer { daemon.terminate() }
        let url = "git://127.0.0.1:\(port)/\(Path.basename(origin))"
        var answered = false
        for _ in 0..<100 where !answered {
            let r = try await LocalProcessRunner().run(
                ["git", "ls-remote", url], workingDirectory: nil, environment: GitWorkspace.env, timeout: 10)
            answered = r.exitCode == 0
            if !answered { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(answered, "git daemon did not answer on \(url)")
        let head = try await CarryHarness.git(["rev-parse", "main"], in: origin)
        // A pool whose members' egress reaches the repository (the claim is refused otherwise).
        _ = try await PoolTests().pool(c.w, size: 1, config: ["GIT_REPO=\(url)"])
        let req = c.remoteUp("tip-ws", repo: "\(url)")
        let r = try await UpAction(c.w.ctx).run(req)
        #expect(r.note == "claimed from pool warm", "\(c.w.h.console.stdout)\(c.w.h.console.stderr)")
        let ready = try String(contentsOfFile: Path.join(c.container, ".so-carry/ready"), encoding: .utf8)
        #expect(ready.contains("repo=\(url)\n") && ready.contains("tip=\(head) main\n"), "\(ready)")
    }
}

/// A claim's bundle is thin where the member's warm-up fetched the checkout's own origin (`CarryIn.thinAfter`):
/// its history from the checkout's origin/HEAD is left out (the parent of HEAD when HEAD is that commit); for another
/// origin, or none fetched, it is whole.
@Suite struct ThinBundleTests {
    @Test func theHistoryOfOriginsHeadIsLeftOutWhereTheMemberFetchedThatOrigin() async throws {
        let c = try await CarryHarness()
        let origin = try await c.origin()
        let clone = c.w.h.path("clone")
        _ = try await LocalProcessRunner().run(
            ["git", "clone", "-q", origin, clone], workingDirectory: nil, environment: GitWorkspace.env, timeout: 60)
        var carry = try #require(try await CarryIn.find(c.w.ctx, directory: clone))
        let head = try await CarryHarness.git(["rev-parse", "HEAD"], in: clone)
        let parent = try await CarryHarness.git(["rev-parse", "HEAD^"], in: clone)
        var source = try await carry.inspectUncounted(includeUncommitted: false).source
        source.origin = "git://example.invalid/app.git"
        // HEAD is origin/HEAD: its parent is left out (a bundle holds a commit at least).
        #expect(await carry.thinAfter(source, warmURL: source.origin) == parent)
        #expect(await carry.thinAfter(source, warmURL: "git://example.invalid/other.git") == nil)
        #expect(await carry.thinAfter(source, warmURL: nil) == nil)
        // A commit of the checkout's own: origin/HEAD itself, and the bundle made after it holds only that commit.
        try c.w.h.tmp.write("clone/new.txt", "new\n")
        _ = try await GitWorkspace.git(["add", "-A"], in: clone)
        _ = try await GitWorkspace.git(["commit", "-q", "-m", "new"], in: clone)
        carry = try #require(try await CarryIn.find(c.w.ctx, directory: clone))
        source = try await carry.inspectUncounted(includeUncommitted: false).source
        source.origin = "git://example.invalid/app.git"
        #expect(await carry.thinAfter(source, warmURL: source.origin) == head)
        let made = try await carry.bundle(source, workspace: "thin", after: Task { head })
        defer { carry.done(made) }
        let listed = try await CarryHarness.git(["bundle", "list-heads", made.file], in: clone)
        let verified = try await LocalProcessRunner().run(
            ["git", "-C", clone, "bundle", "verify", made.file], workingDirectory: nil, environment: GitWorkspace.env,
            timeout: 60)
        #expect(listed.contains("refs/so/carry/head") && verified.stdout.contains(head), "\(listed) \(verified)")
    }
}
