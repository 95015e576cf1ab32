import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoWorkspace

/// The stack's clone.sh and the agent's readiness probe (its compose `healthcheck:`), run here with their container
/// paths (/workspace, /tmp/so-clone-done and the FIFOs /tmp/so-clone-wait, /tmp/so-claim-wait) pointed into a
/// scratch directory.
@Suite struct CloneScriptTests {
    static let env: [String: String] = {
        var e = ProcessInfo.processInfo.environment
        for k in ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"] { e[k] = "t" }
        for k in ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"] { e[k] = "t@example.invalid" }
        e["GIT_CONFIG_NOSYSTEM"] = "1"
        return e
    }()

    static func sh(_ script: String, env: [String: String] = env) async throws -> ProcessResult {
        try await LocalProcessRunner().run(["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 60)
    }

    /// `text` with the container's paths pointed into `t`.
    static func pointed(_ text: String, into t: TempDir) -> String {
        text.replacingOccurrences(of: "/workspace", with: t.file("ws"))
            .replacingOccurrences(of: "/tmp/so-clone-done", with: t.file("done"))
            .replacingOccurrences(of: "/tmp/so-clone-wait", with: t.file("wait"))
            .replacingOccurrences(of: "/tmp/so-claim-wait", with: t.file("claim-wait"))
            .replacingOccurrences(of: "/tmp/so-warm", with: t.file("warm"))
    }

    /// clone.sh pointed into `t`, written there as clone.sh.
    static func writeScript(into t: TempDir) throws {
        try t.write("clone.sh", pointed(try RepoPaths.cloneScript(), into: t))
    }

    /// An origin whose top level holds what a move can miss: dot files, a name with a space, one starting with
    /// two dots, a directory and a symbolic link.
    static func origin(in t: TempDir) async throws -> String {
        let seed = t.file("seed")
        for (path, text) in [
            ("README.md", "hello\n"), (".env.example", "A=1\n"), ("a file", "x\n"), ("..odd", "y\n"),
            ("dir/sub.txt", "z\n"), (".github/ci.yml", "on: push\n"),
        ] {
            try t.write("seed/" + path, text)
        }
        let q = CommandText.quote
        let r = try await sh(
            "git init -q -b trunk \(q(seed)) && cd \(q(seed)) && ln -s README.md link && git add -A "
                + "&& git commit -q -m first && git clone -q --bare . \(q(t.file("origin.git")))")
        #expect(r.exitCode == 0, "\(r.stderr)")
        return t.file("origin.git")
    }

    @Test func theCloneMovesEveryTopLevelEntryIntoPlace() async throws {
        let t = try TempDir("so-clone-move")
        defer { t.cleanup() }
        let origin = try await Self.origin(in: t)
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try Self.writeScript(into: t)
        var env = Self.env
        env["GIT_REPO"] = "file://\(origin)"
        let r = try await LocalProcessRunner().run(
            ["sh", t.file("clone.sh")], workingDirectory: nil, environment: env, timeout: 60)
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        let listed = try FileManager.default.contentsOfDirectory(atPath: t.file("ws")).sorted()
        #expect(
            listed == ["..odd", ".env.example", ".git", ".github", "README.md", "a file", "dir", "link"], "\(listed)")
        // Nothing of the checkout missing or changed, and nothing of the clone's own left behind.
        let status = try await Self.sh("git -C \(CommandText.quote(t.file("ws"))) status --porcelain --ignored")
        #expect(status.exitCode == 0 && status.stdout.isEmpty, "\(status.stdout)\(status.stderr)")
    }

    /// A clone with no `GIT_REF` names the remote's default branch (asked for while its commit is fetched) as
    /// the work's base, whatever it is called; a `GIT_REF` names another; a remote that does not answer leaves the
    /// clone marked incomplete, with git's own reason.
    @Test func theCloneStartsFromTheDefaultBranchOrTheRefNamed() async throws {
        let t = try TempDir("so-clone-ref")
        defer { t.cleanup() }
        let origin = try await Self.origin(in: t)
        let q = CommandText.quote
        let branched = try await Self.sh(
            "cd \(q(t.file("seed"))) && git checkout -q -b side && echo s > side.txt && git add side.txt "
                + "&& git commit -q -m side && git push -q \(q(origin)) side")
        #expect(branched.exitCode == 0, "\(branched.stderr)")
        try Self.writeScript(into: t)
        func clone(_ repo: String, ref: String?) async throws -> (ProcessResult, String, String) {
            try? FileManager.default.removeItem(atPath: t.file("ws"))  // a fresh workspace each time; none at first
            try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
            var env = Self.env
            env["GIT_REPO"] = repo
            env["GIT_REF"] = ref
            let r = try await LocalProcessRunner().run(
                ["sh", t.file("clone.sh")], workingDirectory: nil, environment: env, timeout: 60)
            let ws = q(t.file("ws"))
            let ref = try await Self.sh("git -C \(ws) config so.ref")
            // The base's subject, once the ref's remote-tracking branch is there, as a fetch of it by name leaves it.
            let base = try await Self.sh(
                "git -C \(ws) rev-parse -q --verify \"refs/remotes/origin/$(git -C \(ws) config so.ref)\" >/dev/null && "
                    + "git -C \(ws) log -1 --format=%s \"$(git -C \(ws) config so.base)\"")
            let subject = base.exitCode == 0 ? base.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "(none)"
            return (r, ref.stdout.trimmingCharacters(in: .whitespacesAndNewlines), subject)
        }
        let (byDefault, defaultRef, defaultBase) = try await clone("file://\(origin)", ref: nil)
        #expect(byDefault.exitCode == 0, "\(byDefault.stdout)\(byDefault.stderr)")
        #expect(defaultRef == "trunk" && defaultBase == "first", "\(defaultRef) \(defaultBase)")
        #expect(byDefault.stdout.contains("at trunk (its default branch)"), "\(byDefault.stdout)")
        let (named, namedRef, namedBase) = try await clone("file://\(origin)", ref: "side")
        #expect(named.exitCode == 0, "\(named.stdout)\(named.stderr)")
        #expect(namedRef == "side" && namedBase == "side", "\(namedRef) \(namedBase)")
        let (missing, _, _) = try await clone("file://\(t.file("nowhere.git"))", ref: nil)
        #expect(missing.exitCode != 0 && missing.stderr.contains("nowhere.git"), "\(missing.stderr)")
        #expect(t.exists("ws/.so-clone-incomplete"))
    }

    /// `origin(in:)`, and its trunk's commit.
    static func originAndTrunk(in t: TempDir) async throws -> (origin: String, trunk: String) {
        let origin = try await Self.origin(in: t)
        let trunk = try await Self.sh("git -C \(CommandText.quote(origin)) rev-parse trunk").stdout
        return (origin, trunk.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A pool's member of `origin` (GIT_WARM, GIT_ORIGIN) started in `t`, running until it is claimed, once its
    /// warm-up's fetch is done (FETCH_HEAD written); then `claim` (shell) runs, and the member's result is returned.
    /// `command`: the agent's command clone.sh runs once done (none: it ends there, marking nothing done); `env`:
    /// more of the member's environment.
    static func warmMember(
        _ t: TempDir, origin: String, claim: String, command: [String] = [], env more: [String: String] = [:]
    ) async throws -> ProcessResult {
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try Self.writeScript(into: t)
        var env = Self.env.merging(more) { $1 }
        env["GIT_CARRY"] = "bundle"
        env["GIT_WARM"] = "1"
        env["GIT_ORIGIN"] = "file://\(origin)"
        env["WORKSPACE_NAME"] = "member"
        async let cloned = LocalProcessRunner().run(
            ["sh", t.file("clone.sh")] + command, workingDirectory: nil, environment: env, timeout: 60)
        let claimed = try await Self.sh(
            "i=0; until [ -s \(CommandText.quote(t.file("ws/.so-clone-tmp/.git/FETCH_HEAD"))) ] || [ $i -gt 500 ]; do "
                + "sleep 0.02; i=$((i + 1)); done; " + claim)
        #expect(claimed.exitCode == 0, "\(claimed.stderr)")
        return try await cloned
    }

    /// A git hook in `t/hooks` that holds every checkout a second (git given `core.hooksPath` to it): a claim's clone
    /// still runs while the test looks.
    static func slowCheckout(_ t: TempDir) throws {
        try t.write("hooks/post-checkout", "#!/bin/sh\nsleep 1\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: t.file("hooks/post-checkout"))
    }

    /// The claimed checkout's branch, last subject, so.ref and origin, and whether origin/<so.ref> is its base.
    static func claimedState(_ t: TempDir) async throws -> String {
        let ws = CommandText.quote(t.file("ws"))
        return try await Self.sh(
            "git -C \(ws) rev-parse --abbrev-ref HEAD && git -C \(ws) log -1 --format=%s && git -C \(ws) config so.ref "
                + "&& git -C \(ws) remote get-url origin && git -C \(ws) rev-parse --verify -q "
                + "\"refs/remotes/origin/$(git -C \(ws) config so.ref)\" | grep -qx \"$(git -C \(ws) config so.base)\" "
                + "&& echo tracked"
        ).stdout
    }

    /// A pool's member whose pool names its origin (GIT_WARM, GIT_ORIGIN) fetches it while it waits; a claim of the
    /// same repository from a remote then asks the remote only where its default branch is and checks out the commit
    /// the warm-up has: the origin's objects are gone by then (the remote still names its branches, a fetch fails).
    @Test func aWarmMemberChecksOutWhatItFetchedWhileItWaited() async throws {
        let t = try TempDir("so-clone-warm")
        defer { t.cleanup() }
        let origin = try await Self.origin(in: t)
        let q = CommandText.quote
        let r = try await Self.warmMember(
            t, origin: origin,
            claim: "mv \(q(origin))/objects \(q(origin))/objects.away && mkdir -p \(q(origin))/objects/pack && "
                + "printf 'repo=%s\\nref=\\nbranch=agent/mine\\nname=\\nemail=\\n' \(q("file://\(origin)")) "
                + "> \(q(t.file("ws/.so-carry/ready")))")
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("fetched while the workspace was warm"), "\(r.stdout)")
        let state = try await Self.claimedState(t)
        #expect(state == "agent/mine\nfirst\ntrunk\nfile://\(origin)\ntracked\n", "\(state)")
    }

    /// A claim handed where its branch is (`tip=COMMIT BRANCH`, asked by so as the claim began: `RemoteTip`) asks the
    /// remote nothing when the warm-up has that commit: the origin is gone altogether by then.
    @Test func aWarmMemberHandedItsTipAsksTheRemoteNothing() async throws {
        let t = try TempDir("so-clone-tip")
        defer { t.cleanup() }
        let (origin, head) = try await Self.originAndTrunk(in: t)
        let q = CommandText.quote
        let r = try await Self.warmMember(
            t, origin: origin,
            claim: "mv \(q(origin)) \(q(origin)).away && "
                + "printf 'repo=%s\\nref=\\nbranch=agent/mine\\nname=\\nemail=\\ntip=%s trunk\\n' \(q("file://\(origin)")) "
                + "\(head) > \(q(t.file("ws/.so-carry/ready")))")
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("(\(head), fetched while the workspace was warm)"), "\(r.stdout)")
        let state = try await Self.claimedState(t)
        #expect(state == "agent/mine\nfirst\ntrunk\nfile://\(origin)\ntracked\n", "\(state)")
    }

    /// A carried-in checkout at a commit the warm-up fetched, with nothing uncommitted, is checked out without its
    /// bundle (none is there to read); its origin is the checkout's. The warm-up has checked its commit out by then
    /// (the claim here comes only once the member's work tree holds it): the claim's checkout writes nothing.
    @Test func aCarriedInCommitTheWarmUpHasNeedsNoBundle() async throws {
        let t = try TempDir("so-clone-nobundle")
        defer { t.cleanup() }
        let (origin, head) = try await Self.originAndTrunk(in: t)
        let q = CommandText.quote
        let warmTree = q(t.file("ws/.so-clone-tmp/README.md"))
        let r = try await Self.warmMember(
            t, origin: origin,
            claim: "i=0; until [ -e \(warmTree) ] || [ $i -gt 500 ]; do sleep 0.02; i=$((i + 1)); done; "
                + "[ -e \(warmTree) ] && printf 'base=%s\\nseed=\\nref=trunk\\nbranch=agent/mine\\norigin=%s\\nname=\\nemail=\\n' \(head) "
                + "\(q("file://\(origin)")) > \(q(t.file("ws/.so-carry/ready")))")
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(!t.exists("ws/.so-carry"), "the carry's directory goes once the clone is done")
        let state = try await Self.sh(
            "git -C \(q(t.file("ws"))) rev-parse --abbrev-ref HEAD && git -C \(q(t.file("ws"))) log -1 --format=%s "
                + "&& git -C \(q(t.file("ws"))) config so.base && git -C \(q(t.file("ws"))) remote get-url origin")
        #expect(state.stdout == "agent/mine\nfirst\n\(head)\nfile://\(origin)\n", "\(state.stdout)\(state.stderr)")
    }

    /// A claim's exec waits for the clone on `/tmp/so-claim-wait`, which the member's clone.sh made as it waited for
    /// its repository and writes a byte to once done: that byte ends the wait. The clone is held a second (a git hook
    /// on its checkout), so the exec is waiting by then, and the exec's look each second is made one each 10 minutes
    /// here: only the byte ends its wait within this run's limit (60 s). A cold `up`'s carry (`deliver` with a probe)
    /// then runs the container's readiness probe (the stack's, as compose gives it, which asks git in the checkout) and
    /// ends with its answer: 0 when it passes, 8 when it fails (`false` here).
    @Test func aClaimsExecIsWokenByTheClonesByteThenRunsTheProbeItIsGiven() async throws {
        for probe in [nil, "healthcheck", "false"] {
            let t = try TempDir("so-clone-claim-wait")
            defer { t.cleanup() }
            let (origin, head) = try await Self.originAndTrunk(in: t)
            let q = CommandText.quote
            try Self.slowCheckout(t)
            let waits = WorkspaceContainer.wakeAndWait("3000").replacingOccurrences(
                of: "timeout 1 dd", with: "timeout 600 dd")
            #expect(waits.contains("timeout 600 dd"), "\(waits)")
            try t.write(
                "claim.sh",
                "c=\(q(t.file("ws/.so-carry")))\n" + Self.pointed(waits, into: t) + "\n"
                    + WorkspaceContainer.probeAfter(1))
            let words = try probe.map {
                $0 == "healthcheck"
                    ? Self.pointed(try RepoPaths.healthcheck("compose/docker-compose-agent-workspace.yml"), into: t)
                    : $0
            }
            let r = try await Self.warmMember(
                t, origin: origin,
                claim: "until [ -p \(q(t.file("claim-wait"))) ]; do sleep 0.01; done; "
                    + "printf 'base=%s\\nseed=\\nref=trunk\\nbranch=agent/mine\\norigin=%s\\nname=\\nemail=\\n' \(head) "
                    + "\(q("file://\(origin)")) > \(q(t.file("ws/.so-carry/ready.part"))) && "
                    + "mv \(q(t.file("ws/.so-carry/ready.part"))) \(q(t.file("ws/.so-carry/ready"))) && "
                    + "{ GIT_CARRY=bundle sh \(q(t.file("claim.sh")))\(words.map { " sh -c \(q($0))" } ?? ""); s=$?; "
                    + "[ $s -eq \(probe == "false" ? 8 : 0) ] || { echo \"exit $s\" >&2; exit 1; }; } "
                    + "&& test -e \(q(t.file("done")))",
                command: ["true"],
                env: [
                    "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath",
                    "GIT_CONFIG_VALUE_0": t.file("hooks"),
                ])
            #expect(r.exitCode == 0, "\(String(describing: probe)): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("clone: done"), "\(r.stdout)")
        }
    }

    /// A pool's member hands its claim over without an exec: so's message (`handOverMessage`) written to the listener
    /// clone.sh keeps on its loopback (SO_HANDOVER_PORT) makes its ready file, and the answer, `done`, comes once the
    /// clone is. What is not a hand-over (here a line of another protocol first) is closed unanswered and the listener
    /// listens on; once it answered it is gone (the port refuses).
    @Test(.enabled(if: Self.hasPython, "python3 is not on this machine (clone.sh listens only where it is)"))
    func aMembersListenerTakesTheHandOverAndAnswersOnceCloned() async throws {
        let t = try TempDir("so-clone-listener")
        defer { t.cleanup() }
        let (origin, head) = try await Self.originAndTrunk(in: t)
        let q = CommandText.quote
        let port = Int.random(in: 20_000...40_000)
        let message = WorkspaceContainer.handOverMessage(
            ticks: "500",
            ready: [
                ("repo", "file://\(origin)"), ("ref", ""), ("branch", "agent/mine"), ("name", ""), ("email", ""),
                ("tip", "\(head) trunk"),
            ], credentials: "")
        try message.write(to: URL(fileURLWithPath: t.file("message")))
        try t.write("client.py", Self.listenerClient)
        let r = try await Self.warmMember(
            t, origin: origin, claim: "python3 \(q(t.file("client.py"))) \(port) \(q(t.file("message")))",
            command: ["true"], env: ["SO_HANDOVER_PORT": String(port)])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("(\(head), fetched while the workspace was warm)"), "\(r.stdout)")
        let state = try await Self.claimedState(t)
        #expect(state == "agent/mine\nfirst\ntrunk\nfile://\(origin)\ntracked\n", "\(state)")
    }

    /// A claim in a checkout handed through the listener: the bundle follows the ready file's lines
    /// (`handOverMessage` with its length) and is streamed onto the volume; the member reads it (its commit is not the
    /// warm-up's) and answers once the clone is done.
    @Test(.enabled(if: Self.hasPython, "python3 is not on this machine (clone.sh listens only where it is)"))
    func aMembersListenerTakesTheBundleOfACheckout() async throws {
        let t = try TempDir("so-clone-listener-bundle")
        defer { t.cleanup() }
        let origin = try await Self.origin(in: t)
        let q = CommandText.quote
        let mine = t.file("mine")
        let made = try await Self.sh(
            "git clone -q \(q(origin)) \(q(mine)) && cd \(q(mine)) && echo local > local.txt && git add -A "
                + "&& git commit -q -m 'local only' && git update-ref refs/so/carry/head HEAD "
                + "&& git bundle create \(q(t.file("repo.bundle"))) refs/so/carry/head 2>/dev/null && git rev-parse HEAD"
        )
        #expect(made.exitCode == 0, "\(made.stderr)")
        let base = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let bundle = try Data(contentsOf: URL(fileURLWithPath: t.file("repo.bundle")))
        let port = Int.random(in: 20_000...40_000)
        let message = WorkspaceContainer.handOverMessage(
            ticks: "500",
            ready: [
                ("base", base), ("seed", ""), ("ref", "trunk"), ("branch", "agent/mine"),
                ("origin", "file://\(origin)"),
                ("name", ""), ("email", ""),
            ], credentials: "", bundle: UInt64(bundle.count))
        try (message + bundle).write(to: URL(fileURLWithPath: t.file("message")))
        try t.write("client.py", Self.listenerClient)
        let r = try await Self.warmMember(
            t, origin: origin, claim: "python3 \(q(t.file("client.py"))) \(port) \(q(t.file("message")))",
            command: ["true"], env: ["SO_HANDOVER_PORT": String(port)])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        let ws = q(t.file("ws"))
        let state = try await Self.sh(
            "git -C \(ws) rev-parse --abbrev-ref HEAD && git -C \(ws) log -1 --format=%s && cat \(ws)/local.txt")
        #expect(state.stdout == "agent/mine\nlocal only\nlocal\n", "\(state.stdout)\(state.stderr)")
    }

    /// A client of clone.sh's listener on port ARGV[1]: first a line of another protocol (closed unanswered), then
    /// the file ARGV[2]'s bytes, whose answer must be `done`; then the port must refuse (the listener is gone).
    static let listenerClient =
        """
        import socket, sys, time
        def send(data):
            for _ in range(250):
                try:
                    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                    break
                except OSError:
                    time.sleep(0.02)
            c.sendall(data)
            c.settimeout(30)
            got = b""
            while not got.endswith(b"\\n"):
                try:
                    x = c.recv(100)
                except ConnectionResetError:
                    break
                if not x:
                    break
                got += x
            return got
        other = send(b"GET / HTTP/1.1\\r\\n\\r\\n")
        claim = send(open(sys.argv[2], "rb").read())
        time.sleep(0.2)
        try:
            socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
            after = "listening"
        except OSError:
            after = "refused"
        print("other:", other, "claim:", claim, "after:", after, file=sys.stderr)
        sys.exit(0 if (other, claim, after) == (b"", b"done\\n", "refused") else 1)
        """

    /// Whether python3 runs here (clone.sh's listener needs it).
    static let hasPython: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "command -v python3 >/dev/null"]
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// A thin bundle (`CarryIn.thinAfter`: its history from the checkout's origin/HEAD left out) is read by a member
    /// whose warm-up holds that commit; a member whose warm-up is older than the checkout's fetch fetches its origin's
    /// branches first, then reads it. Either way the workspace starts at the checkout's commit.
    @Test func aThinBundleIsReadWithWhatTheWarmUpFetchedOrWhatItFetchesThen() async throws {
        for memberIsBehind in [false, true] {
            let t = try TempDir("so-clone-thin")
            defer { t.cleanup() }
            let (origin, _) = try await Self.originAndTrunk(in: t)
            let q = CommandText.quote
            let mine = q(t.file("mine"))
            // The checkout: a clone of the origin with a commit of its own; with `memberIsBehind`, the origin moves on
            // (and the checkout fetches it) only after the member's warm-up.
            let cloned = try await Self.sh(
                "git clone -q \(q(origin)) \(mine) && cd \(mine) && echo mine > mine.txt && git add mine.txt "
                    + "&& git commit -q -m mine")
            #expect(cloned.exitCode == 0, "\(cloned.stderr)")
            let later =
                "cd \(q(t.file("seed"))) && echo later > later.txt && git add later.txt && git commit -q -m later "
                + "&& git push -q \(q(origin)) trunk && cd \(mine) && git pull -q --rebase origin trunk"
            // The bundle as CarryIn makes it: refs/so/carry/head, the history of origin/HEAD left out.
            let bundle =
                "cd \(mine) && git update-ref refs/so/carry/head HEAD && git bundle create -q "
                + "\(q(t.file("ws/.so-carry/repo.bundle"))) refs/so/carry/head --not origin/HEAD"
            let r = try await Self.warmMember(
                t, origin: origin,
                claim: (memberIsBehind ? later + " && " : "") + bundle + " && "
                    + "printf 'base=%s\\nseed=\\nref=trunk\\nbranch=agent/mine\\norigin=%s\\nname=\\nemail=\\n' "
                    + "\"$(git -C \(mine) rev-parse HEAD)\" \(q("file://\(origin)")) > \(q(t.file("ws/.so-carry/ready")))"
            )
            #expect(r.exitCode == 0, "\(memberIsBehind): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("this workspace lacks") == memberIsBehind, "\(r.stdout)")
            let state = try await Self.sh(
                "git -C \(q(t.file("ws"))) log --format=%s | tr '\\n' ' ' && git -C \(q(t.file("ws"))) status --porcelain"
            )
            #expect(
                state.stdout == (memberIsBehind ? "mine later first " : "mine first "), "\(state.stdout)\(state.stderr)"
            )
        }
    }

    /// Who commits: GIT_USER_NAME/EMAIL from the environment go into the checkout's own config and into the file
    /// GIT_CONFIG_SYSTEM names (a repository made elsewhere in the container); a restart with none (a pool's member
    /// claimed, then restarted) keeps the checkout's; with nothing anywhere, a clear default.
    @Test func theIdentityGoesIntoTheCheckoutsConfig() async throws {
        let t = try TempDir("so-clone-identity")
        defer { t.cleanup() }
        let origin = try await Self.origin(in: t)
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try Self.writeScript(into: t)
        var env = Self.env
        for k in ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"] { env[k] = nil }
        env["GIT_REPO"] = "file://\(origin)"
        env["GIT_CONFIG_SYSTEM"] = t.file("system-gitconfig")
        env["GIT_USER_NAME"] = "Ada Lovelace"
        env["GIT_USER_EMAIL"] = "ada@example.invalid"
        let q = CommandText.quote
        func run(_ env: [String: String]) async throws -> String {
            let r = try await LocalProcessRunner().run(
                ["sh", t.file("clone.sh")], workingDirectory: nil, environment: env, timeout: 60)
            #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
            let who = try await Self.sh(
                "cd \(q(t.file("ws"))) && git commit -q --allow-empty -m x && git log -1 --format='%an <%ae>' && "
                    + "git config --file \(q(t.file("system-gitconfig"))) user.name",
                env: env.filter { !$0.key.hasPrefix("GIT_USER") && $0.key != "GIT_CONFIG_SYSTEM" })
            return who.stdout
        }
        #expect(try await run(env) == "Ada Lovelace <ada@example.invalid>\nAda Lovelace\n")
        env["GIT_USER_NAME"] = nil
        env["GIT_USER_EMAIL"] = nil
        #expect(try await run(env) == "Ada Lovelace <ada@example.invalid>\nAda Lovelace\n")
        env["GIT_REPO"] = nil
        try FileManager.default.removeItem(atPath: t.file("ws"))
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        let r = try await LocalProcessRunner().run(
            ["sh", t.file("clone.sh")], workingDirectory: nil, environment: env, timeout: 60)
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        let fallback = try await Self.sh("git config --file \(q(t.file("system-gitconfig"))) --get-regexp '^user'")
        #expect(fallback.stdout == "user.name so agent\nuser.email agent@so.invalid\n", "\(fallback.stdout)")
    }

    /// A pool's member (GIT_WARM) is ready while it waits for its claim: the readiness probe passes then (a claim
    /// finds it ready, and nothing of its readiness changes beside the claimer's first command). A cold `up`'s carry
    /// (GIT_CARRY alone) is not ready before its clone. Once the claim's ready file is there, the probe waits for the
    /// checkout as any does: the claim's clone is held a second (a git hook on its checkout), and the probe is still
    /// waiting half a second in, and passes once the checkout is in place.
    @Test func aPoolsMemberIsReadyWhileItWaitsAndOnceClaimedOnlyWhenCloned() async throws {
        for member in [true, false] {
            let t = try TempDir("so-clone-warm-ready")
            defer { t.cleanup() }
            let (origin, _) = try await Self.originAndTrunk(in: t)
            let q = CommandText.quote
            try Self.slowCheckout(t)
            try t.write(
                "probe.sh",
                Self.pointed(try RepoPaths.healthcheck("compose/docker-compose-agent-workspace.yml"), into: t))
            try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
            try Self.writeScript(into: t)
            let env = Self.env.merging(
                [
                    "GIT_CARRY": "bundle", "WORKSPACE_NAME": "member", "GIT_WARM": member ? "1" : "",
                    "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath",
                    "GIT_CONFIG_VALUE_0": t.file("hooks"),
                ]
            ) { $1 }
            async let cloned = LocalProcessRunner().run(
                ["sh", t.file("clone.sh"), "true"], workingDirectory: nil, environment: env, timeout: 60)
            let probe = "sh \(q(t.file("probe.sh")))"
            let waiting =
                member
                ? "timeout 5 \(probe) || { echo 'a member waiting for its claim is not ready' >&2; exit 1; }"
                : "! timeout 1 \(probe) || { echo 'a cold carry is ready before its clone' >&2; exit 1; }"
            let r = try await Self.sh(
                "until [ -p \(q(t.file("claim-wait"))) ]; do sleep 0.01; done; \(waiting); "
                    + "printf 'repo=%s\\nref=\\nbranch=agent/mine\\nname=\\nemail=\\n' \(q("file://\(origin)")) "
                    + "> \(q(t.file("ws/.so-carry/ready.part"))) && "
                    + "mv \(q(t.file("ws/.so-carry/ready.part"))) \(q(t.file("ws/.so-carry/ready"))) && "
                    + "{ \(probe); echo $? > \(q(t.file("probed"))); } & sleep 0.5; "
                    + "[ ! -e \(q(t.file("probed"))) ] || { echo 'ready before the claim was cloned' >&2; exit 1; }; wait; "
                    + "[ \"$(cat \(q(t.file("probed"))))\" = 0 ] && [ -d \(q(t.file("ws/.git"))) ] "
                    + "&& [ ! -e \(q(t.file("ws/.so-clone-incomplete"))) ]",
                env: env)
            #expect(r.exitCode == 0, "member \(member): \(r.stdout)\(r.stderr)")
            let c = try await cloned
            #expect(c.exitCode == 0 && c.stdout.contains("clone: done"), "member \(member): \(c.stdout)\(c.stderr)")
        }
    }

    /// The readiness probe as compose gives it (`$$` is compose's `$`): waiting while the clone runs, it ends
    /// with success once clone.sh marks the clone done, which also wakes it through the FIFO the probe made.
    @Test func theReadinessProbeEndsWhenTheCloneIsDone() async throws {
        let t = try TempDir("so-clone-probe")
        defer { t.cleanup() }
        let probe = Self.pointed(try RepoPaths.healthcheck("compose/docker-compose-agent-workspace.yml"), into: t)
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try Self.writeScript(into: t)
        try t.write("probe.sh", probe)
        // The probe first (it waits, and makes the FIFO where it can: timeout(1) is there), then the entrypoint with
        // no repository: done at once.
        let q = CommandText.quote
        let r = try await Self.sh(
            "sh \(q(t.file("probe.sh"))) & p=$!; "
                + "until [ -p \(q(t.file("wait"))) ] || ! command -v timeout >/dev/null; do sleep 0.01; done; "
                + "sh \(q(t.file("clone.sh"))) true; wait $p")
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        #expect(t.exists("done"))
    }
}
