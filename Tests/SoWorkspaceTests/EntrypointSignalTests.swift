import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// Whether this process may make a PID namespace (`unshare -p`, root).
enum PIDNamespace {
    static let available: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = ["-p", "-f", "true"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()
}

/// The workspace images' PID 1s stop on SIGTERM: clone.sh passes it on to the agent's command (`sleep`,
/// which as PID 1 would ignore it), and the egress proxy handles it. Without that every stop of a workspace
/// waits out Kubernetes' 30 s grace period. Each runs as PID 1 of a new PID namespace (`unshare`, root).
@Suite(
    .serialized,
    .enabled(if: PIDNamespace.available, "unshare -p (root) is not available: PID 1 cannot be reproduced here"))
struct EntrypointSignalTests {
    /// Starts `argv` as PID 1 of a new PID namespace, sends its PID 1 SIGTERM once it is ready (`ready` exists,
    /// holding `saying` when given), and returns its exit status and the seconds it took to stop (nil: still
    /// running 5 s later, then killed). A shell drives it: python's exec starts it as a container runtime
    /// starts PID 1, with no signal blocked (this test process blocks some, and a child inherits its mask).
    static func stopAsPID1(_ argv: [String], environment: [String: String] = [:], ready: String, saying: String? = nil)
        async throws
        -> (status: Int32, seconds: Double?, detail: String)
    {
        let script = #"""
            python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])' \
                unshare -p -f --kill-child "$@" >/dev/null 2>&1 &
            u=$!
            ready() { if [ -n "$SAYING" ]; then grep -qs "$SAYING" "$READY"; else [ -e "$READY" ]; fi; }
            i=0
            c=
            # PID 1 read once it is ready, not before: before, the child of "$u" can be another (a python shim's
            # own child, before its exec of unshare), and a PID read then and signalled once ready is gone.
            until [ -n "$c" ]; do
              if ready; then c=$(cut -d' ' -f1 /proc/$u/task/$u/children 2>/dev/null || true); fi
              i=$((i + 1)); if [ $i -gt 600 ]; then kill -9 $u; echo "not ready"; exit 0; fi
              [ -n "$c" ] || sleep 0.05
            done
            s=$(date +%s%N)
            kill -TERM "$c"
            if timeout 5 tail --pid=$u -f /dev/null; then wait $u; rc=$?; echo "stopped $rc $(( ($(date +%s%N) - s) / 1000000 ))"
            else
              # What PID 1 was doing, for the failure's message: its signal masks (an ignored TERM cannot be
              # trapped), its state and what it waits in, its children.
              d=$(grep -E '^(State|SigBlk|SigIgn|SigCgt)' /proc/$c/status | tr '\n' ' ')
              d="$d wchan=$(cat /proc/$c/wchan 2>/dev/null) children=$(cat /proc/$c/task/$c/children 2>/dev/null)"
              kill -9 $u; echo "running $d"; fi
            """#
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        env["READY"] = ready
        env["SAYING"] = saying ?? ""
        let r = try await LocalProcessRunner().run(
            ["sh", "-c", script, "stop-as-pid1"] + argv, workingDirectory: nil, environment: env, timeout: 60)
        let words = r.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(words.first == "stopped" || words.first == "running", "\(r.stdout)\(r.stderr)")
        guard words.first == "stopped", words.count == 3, let status = Int32(words[1]), let ms = Double(words[2]) else {
            return (-1, nil, r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (status, ms / 1000, "")
    }

    /// The stack's clone.sh as `t/clone.sh`, its /workspace at `t/ws` (a checkout already there, which it keeps,
    /// so the command runs at once) and its done-marker at `t/done`.
    static func writeCloneScript(in t: TempDir) throws {
        try FileManager.default.createDirectory(atPath: t.file("ws/.git"), withIntermediateDirectories: true)
        let script = try RepoPaths.cloneScript()
            .replacingOccurrences(of: "/workspace", with: t.file("ws")).replacingOccurrences(
                of: "/tmp/so-clone-done", with: t.file("done"))
        try t.write("clone.sh", script)
    }

    @Test func theAgentsCommandStopsOnSIGTERM() async throws {
        let t = try TempDir("so-entrypoint-term")
        defer { t.cleanup() }
        try Self.writeCloneScript(in: t)
        let r = try await Self.stopAsPID1(["sh", t.file("clone.sh"), "sleep", "infinity"], ready: t.file("done"))
        let seconds = try #require(r.seconds, "clone.sh as PID 1 did not stop within 5 s of SIGTERM: \(r.detail)")
        // Its own exit status, not the kill's (137): it handled the signal. How fast is no test's business here
        // (a loaded CI machine took over 2 s to start and stop the proxy's python).
        #expect(r.status == 143, "status \(r.status) after \(seconds) s")
    }

    /// A SIGTERM that reaches clone.sh while its forked child is still the shell (between the fork and the
    /// child's exec of the command: the child then holds the shell's handler, and dash's reset of its traps there
    /// drops the signal) still stops it. A watcher sends it at that moment: the first time it sees a child of PID 1
    /// whose command line is PID 1's own. Found as a one-in-five loss in CI's loaded runs; before the fix about one
    /// send in five at that moment was lost (the command ran on, PID 1 waited for it). Tried until 8 sends met the
    /// window (or 40 starts), so the old script fails here nearly always.
    @Test func aSIGTERMWhileTheCommandIsForkedIsPassedOn() async throws {
        let t = try TempDir("so-entrypoint-fork")
        defer { t.cleanup() }
        try Self.writeCloneScript(in: t)
        let script = #"""
            rm -f "$READY"
            python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])' \
                unshare -p -f --kill-child sh "$CLONE" sleep infinity >/dev/null 2>&1 &
            u=$!
            python3 - "$u" "$READY" <<'PY'
            import os, signal, sys, time
            u, ready = sys.argv[1], sys.argv[2]
            def cmdline(p):
                with open(f"/proc/{p}/cmdline", "rb") as f: return f.read()
            c, start, seen = None, time.time(), None
            while time.time() - start < 10 and (seen is None or time.time() - seen < 1):
                try:
                    if c is None:
                        kids = open(f"/proc/{u}/task/{u}/children").read().split()
                        if kids and cmdline(kids[0]).startswith(b"sh\0"): c, me = kids[0], cmdline(kids[0])
                        continue
                    if not os.path.exists(ready): continue
                    seen = seen or time.time()
                    for k in open(f"/proc/{c}/task/{c}/children").read().split():
                        if cmdline(k) == me:
                            os.kill(int(c), signal.SIGTERM); print("window"); sys.exit(0)
                except OSError: pass
            print("missed")
            if c: os.kill(int(c), signal.SIGTERM)
            PY
            if timeout 20 tail --pid=$u -f /dev/null; then echo stopped; else
              c=$(cut -d' ' -f1 /proc/$u/task/$u/children 2>/dev/null)
              echo "running: PID 1 $(grep -E '^(State|SigCgt)' /proc/$c/status 2>/dev/null | tr '\n' ' ') wchan=$(cat /proc/$c/wchan 2>/dev/null)"
              for k in $(cat /proc/$c/task/$c/children 2>/dev/null); do
                echo "  child $(tr '\0' ' ' < /proc/$k/cmdline) $(grep -E '^(State|SigCgt|SigPnd)' /proc/$k/status | tr '\n' ' ')"
              done
              kill -9 $u; fi
            """#
        var env = ProcessInfo.processInfo.environment
        env["READY"] = t.file("done")
        env["CLONE"] = t.file("clone.sh")
        var met = 0
        var lost = 0
        for _ in 0..<40 where met < 8 {
            let r = try await LocalProcessRunner().run(
                ["sh", "-c", script], workingDirectory: nil, environment: env, timeout: 30)
            guard r.stdout.hasPrefix("window") else { continue }
            met += 1
            if !r.stdout.contains("stopped") {
                lost += 1
                print("EntrypointSignalTests: a lost SIGTERM: \(r.stdout)")
            }
        }
        #expect(
            lost == 0, "clone.sh as PID 1 ran on after \(lost) of \(met) SIGTERMs sent while its command was forked")
        if met == 0 { print("EntrypointSignalTests: no send met the fork's window in 40 starts; nothing shown") }
    }

    @Test func theAgentsCommandKeepsItsStdinAndExitStatus() async throws {
        let t = try TempDir("so-entrypoint-stdin")
        defer { t.cleanup() }
        try Self.writeCloneScript(in: t)
        let r = try await LocalProcessRunner().run(
            ["sh", "-c", "echo from-stdin | sh \(t.file("clone.sh")) sh -c 'cat; exit 7'"], workingDirectory: nil,
            environment: ProcessInfo.processInfo.environment, timeout: 30)
        #expect(r.exitCode == 7 && r.stdout.hasSuffix("from-stdin\n"), "exit \(r.exitCode): \(r.stdout)\(r.stderr)")
    }

    @Test func theEgressProxyStopsOnSIGTERM() async throws {
        let t = try TempDir("so-proxy-term")
        defer { t.cleanup() }
        let proxy = Path.join(RepoPaths.root, "config/agent-workspace/egress-proxy.py")
        // The proxy itself as PID 1 (port 0: any free port; the shell execs it), ready once it says it listens.
        let r = try await Self.stopAsPID1(
            ["sh", "-c", "exec python3 \(proxy) > \(t.file("out"))"],
            environment: ["SO_EGRESS_LISTEN": "0", "SO_EGRESS_READY": t.file("ready")],
            ready: t.file("out"), saying: "so egress proxy on")
        let seconds = try #require(
            r.seconds, "the egress proxy as PID 1 did not stop within 5 s of SIGTERM: \(r.detail)")
        #expect(r.status == 0, "status \(r.status) after \(seconds) s")
    }
}
