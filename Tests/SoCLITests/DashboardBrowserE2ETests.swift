import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// `so dashboard` in a real browser (Debian's chromium and chromedriver, driven by Selenium from PyPI), on a node
/// that runs containers: a workspace appears, a detached task goes queued → running → succeeded with its cost, a
/// cancel from the page works, a hostile task text shows as text, a wrong token is refused, all without a reload
/// (Browser/dashboard_e2e.py says each). Screenshots of every page go to .build/e2e-screenshots/dashboard.
@Suite(
    .serialized,
    RealNode.required,
    .enabled(if: Browser.available, "no chromium, chromedriver and selenium here: .ci/run installs them")
)
struct DashboardBrowserE2ETests {
    @Test func aPersonSeesEveryChangeWithoutAReload() async throws {
        let t = try TempDir("so-e2e-dashboard")
        defer { t.cleanup() }
        try await AgentE2E.buildImage()
        let stack = try AgentE2E.lightStack(in: t)
        let (daemon, repo) = try await AgentE2E.serveRepository(in: t)
        defer { AgentE2E.stop(daemon) }
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "SO_ROOT": RepoPaths.root]
        let ws = "e2e-dash"
        let dashboard = Process()
        dashboard.executableURL = URL(fileURLWithPath: E2E.binary)
        dashboard.arguments = ["dashboard", "--port", "0"]
        dashboard.currentDirectoryURL = URL(fileURLWithPath: t.path)
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        dashboard.environment = environment
        let out = Pipe()
        dashboard.standardOutput = out
        dashboard.standardError = FileHandle.standardError
        try dashboard.run()
        defer { dashboard.terminate() }
        let url = try Browser.firstURL(out)
        // A plain deployment whose container crashes: its page shows why, and the container's last lines.
        try await RealNode.deploy("crash", in: t)
        let started = try await E2E.so(["deployment", "--dir", "dep", "start", "--no-wait"] + RealNode.kc, cwd: t.path)
        #expect(started.exitCode == 0, "\(started.stdout)\n\(started.stderr)")
        let shots = Path.join(RepoPaths.root, ".build/e2e-screenshots/dashboard")
        let up = [
            "up", stack, "--name", ws, "--config", "GIT_REPO=\(repo)", "--config", "AGENT_IMAGE=\(AgentE2E.image)",
            "--timeout", "180", "--progress", "plain",
        ]
        // Every step of the script has its own bound (a `so up` of 180 s, a task's 180 s, ...); the whole run's is
        // their sum, not less: under a CI that runs every suite at once a 300 s bound stopped it midway. Its lines go
        // to a log as they are said, so a run stopped midway still tells which step it was on.
        let log = t.file("dashboard_e2e.log")
        try await AgentE2E.removing(ws, t, env) {
            do {
                let r = try await AgentE2E.run(
                    [
                        "python3", Path.join(RepoPaths.root, "Tests/SoCLITests/Browser/dashboard_e2e.py"), "--url", url,
                        "--so", E2E.binary, "--workspace", ws, "--cwd", t.path, "--out", shots, "--log", log,
                        "--up", String(decoding: try JSONSerialization.data(withJSONObject: up), as: UTF8.self),
                    ], cwd: t.path, env: env, timeout: 1200)
                print(r.stdout)
                #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            } catch {
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? "(nothing)"
                Issue.record("\(error)\nthe script had said:\n\(said)")
            }
        }
        await RealNode.remove(t)
        // Stopped by SIGTERM, it ends at once and frees its port.
        dashboard.terminate()
        dashboard.waitUntilExit()
        #expect(dashboard.terminationReason == .exit, "so dashboard did not end on SIGTERM")
    }
}

enum Browser {
    static let available =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && (try? Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "-c", "import selenium"]))
            .map {
                $0.waitUntilExit()
                return $0.terminationStatus == 0
            } ?? false

    /// The URL `so dashboard` prints first (with its token).
    static func firstURL(_ pipe: Pipe) throws -> String {
        var text = ""
        let end = Date().addingTimeInterval(60)
        while Date() < end {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains("http://") }),
                let r = line.range(of: "http://")
            {
                return String(line[r.lowerBound...]).trimmingCharacters(in: .whitespaces)
            }
        }
        throw SoError("so dashboard printed no URL: \(text)")
    }
}
