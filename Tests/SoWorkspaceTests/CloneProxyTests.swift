import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// clone.sh behind the egress proxy (spec `egress-proxy:`), a Deployment of its own started beside the agent's: on a
/// loaded node the clone's first fetch came before the proxy listened, and the container restarted after a back-off
/// (seen in `GitHubLoopE2ETests`' App walk: "Failed to connect to egress-proxy port 3128 after 4 ms"). Here the proxy
/// is a local one that listens only after the clone said it tries again.
@Suite struct CloneProxyTests {
    /// A forward proxy for git over HTTP that is the origin itself (`git http-backend` over the directory given),
    /// which writes its port to a file, then waits `delay` seconds before it listens on it.
    static let proxy = #"""
        import http.server, os, socket, subprocess, sys, threading, time, urllib.parse
        root, port_file, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        open(port_file, "w").write(str(port))
        if len(sys.argv) > 4:
            # Listens once the clone said it tries again (its output in that file), whenever that is.
            for _ in range(1200):
                if b"does not answer yet" in (open(sys.argv[4], "rb").read() if os.path.exists(sys.argv[4]) else b""): break
                time.sleep(0.05)
        time.sleep(delay)
        class H(http.server.BaseHTTPRequestHandler):
            def run(self, method):
                url = urllib.parse.urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1",
                       "PATH_INFO": url.path, "REQUEST_METHOD": method, "QUERY_STRING": url.query,
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(raw)),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
                out = subprocess.run(["git", "http-backend"], input=raw, env=env, capture_output=True).stdout
                head, _, body = out.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode().splitlines():
                    k, _, v = line.partition(":")
                    if k.lower() == "status": status = int(v.split()[0])
                    elif k: headers.append((k, v.strip()))
                self.send_response(status)
                for k, v in headers: self.send_header(k, v)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def do_GET(self): self.run("GET")
            def do_POST(self): self.run("POST")
            def log_message(self, *a): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
        # Never outlives the test process (its parent). Not a fixed 120 s: under ThreadSanitizer, with every suite at
        # once, a clone started more than 120 s after its proxy and met none ("Failed to connect", 60 s of tries).
        parent = os.getppid()
        def orphaned():
            while os.getppid() == parent: time.sleep(1)
            server.shutdown()
        threading.Thread(target=orphaned, daemon=True).start()
        server.serve_forever()
        """#

    /// The proxy started (it listens `delay` seconds on), and clone.sh's environment with it as every proxy.
    /// `after`: a file the proxy reads; it listens only once the clone wrote there that it tries again.
    static func behindProxy(_ t: TempDir, delay: Double, after: String? = nil) throws -> (Process, [String: String]) {
        try t.write("proxy.py", proxy)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments =
            ["python3", t.file("proxy.py"), t.path, t.file("port"), String(delay)] + (after.map { [$0] } ?? [])
        // Its own output: a test process that dies leaves no pipe held open by it (swift test would wait on it).
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Python's start, however loaded the run (every suite at once, under ThreadSanitizer): a minute at most.
        var port = ""
        for _ in 0..<3000 where port.isEmpty {
            usleep(20_000)
            port = (try? String(contentsOfFile: t.file("port"), encoding: .utf8)) ?? ""
        }
        var env = CloneScriptTests.env
        for k in ["NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"] { env[k] = nil }
        for k in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] { env[k] = "http://127.0.0.1:\(port)" }
        return (p, env)
    }

    /// Whether a TCP connection to the proxy URL's port on 127.0.0.1 is accepted, asked every 50 ms for `within` s.
    static func listens(_ proxyURL: String, within seconds: Double) -> Bool {
        guard let port = proxyURL.split(separator: ":").last.flatMap({ UInt16($0) }) else { return false }
        let end = Date().addingTimeInterval(seconds)
        repeat {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            let answered = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if answered { return true }
            usleep(50_000)
        } while Date() < end
        return false
    }

    @Test func aCloneWaitsForTheEgressProxyToListen() async throws {
        let t = try TempDir("so-clone-proxy")
        defer { t.cleanup() }
        _ = try await CloneScriptTests.origin(in: t)
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try CloneScriptTests.writeScript(into: t)
        // The proxy listens 1 s after the clone said it tries again (however late a loaded machine starts it).
        let (p, env) = try Self.behindProxy(t, delay: 1, after: t.file("out"))
        defer { p.terminate() }
        var proxied = env
        // A name only the proxy knows: the clone reaches it through the proxy, or not at all.
        proxied["GIT_REPO"] = "http://origin.invalid/origin.git"
        proxied["CLONE"] = t.file("clone.sh")
        proxied["OUT"] = t.file("out")
        let r = try await LocalProcessRunner().run(
            ["sh", "-c", #"sh "$CLONE" > "$OUT" 2>&1"#], workingDirectory: nil, environment: proxied, timeout: 90)
        let out = (try? String(contentsOfFile: t.file("out"), encoding: .utf8)) ?? ""
        #expect(r.exitCode == 0, "\(out)\(r.stderr)")
        #expect(
            out.contains("clone: the egress proxy (127.0.0.1) does not answer yet")
                && out.contains("clone: the egress proxy answered after"), "\(out)")
        let ref = try await CloneScriptTests.sh("git -C \(CommandText.quote(t.file("ws"))) config so.ref")
        #expect(ref.stdout == "trunk\n", "the default branch asked again once the proxy answered: \(ref.stdout)")
        #expect(t.exists("ws/README.md") && !t.exists("ws/.so-clone-incomplete"))
    }

    /// Any other failure is the clone's own at once: a proxy that answers, for a repository that is not there.
    @Test func aFailureOtherThanTheProxysIsNotTriedAgain() async throws {
        let t = try TempDir("so-clone-proxy-missing")
        defer { t.cleanup() }
        try FileManager.default.createDirectory(atPath: t.file("ws"), withIntermediateDirectories: true)
        try CloneScriptTests.writeScript(into: t)
        let (p, env) = try Self.behindProxy(t, delay: 0)
        defer { p.terminate() }
        // The proxy answers before the clone starts (it was given a fixed 0.3 s once its port was written).
        try #require(Self.listens(env["HTTP_PROXY"] ?? "", within: 60), "the proxy did not listen within 60 s")
        var proxied = env
        proxied["GIT_REPO"] = "http://origin.invalid/nowhere.git"
        proxied["CLONE"] = t.file("clone.sh")
        proxied["OUT"] = t.file("out")
        proxied["ERR"] = t.file("err")
        // Its output in files, as the test above has it, so that a clone stopped at the time limit still says where it
        // was (how the proxy's former 120 s end was found).
        let r: ProcessResult?
        var stopped: (any Error)?
        do {
            r = try await LocalProcessRunner().run(
                ["sh", "-c", #"sh -x "$CLONE" > "$OUT" 2> "$ERR""#], workingDirectory: nil, environment: proxied,
                timeout: 60)
        } catch {
            (r, stopped) = (nil, error)
        }
        let out = (try? String(contentsOfFile: t.file("out"), encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: t.file("err"), encoding: .utf8)) ?? ""
        guard let r else {
            Issue.record("\(stopped.map { "\($0)" } ?? "")\nstdout: \(out)\nstderr (sh -x): \(err.suffix(3000))")
            return
        }
        #expect(r.exitCode != 0 && !out.contains("does not answer yet"), "\(out)\(err)")
        #expect(err.contains("nowhere.git"), "git's own words: \(err)")
    }
}
