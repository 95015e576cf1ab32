import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoRender

/// spec `egress-proxy:`: the named service's pod alone may reach any address on the allowed ports and is
/// told the allowlist; every other container reaches HTTP(S) through it and the deployment's services directly.
@Suite struct EgressProxyTests {
    static let compose = """
        services:
          app:
            image: x
            environment:
              HTTPS_PROXY: http://corp-proxy:8080
          worker:
            image: x
          egress-proxy:
            image: x
            expose: ["3128"]

        """

    func render(_ spec: String, compose: String = EgressProxyTests.compose, perService: Bool = true) throws -> Manifest
    {
        let t = try TempDir("so-egress-proxy")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\n" + (perService ? "pod-per-service: true\n" : ""))
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n" + spec)
        try t.write("config.env", "")
        try t.write("compose/docker-compose-p.yml", compose)
        let model = try DeploymentLoader.load(
            t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
        return try Renderer.render(model, options: RenderOptions(egressAddresses: ["api.example.com": ["192.0.2.10"]]))
    }

    func env(_ m: Manifest, _ deployment: String) -> [String: String] {
        var out: [String: String] = [:]
        let c = m.object("Deployment", deployment)?["spec"]?["template"]?["spec"]?["containers"]?[0]?["env"]
        if case .list(let items)? = c {
            for i in items { if let n = i["name"]?.string { out[n] = i["value"]?.string } }
        }
        return out
    }

    @Test func theProxyAloneGoesOutAndTheOthersGoThroughIt() throws {
        let m = try render(
            "egress: ['https://api.example.com', 'git://git.example.org/a.git', 10.1.0.0/16]\negress-proxy: egress-proxy\n"
        )
        let proxy = env(m, "laconic-d-egress-proxy-deployment")
        #expect(proxy["SO_EGRESS_ALLOW"] == "api.example.com,git.example.org,10.1.0.0/16")
        #expect(proxy["SO_EGRESS_PORTS"] == "443,22,80,9418")
        #expect(proxy["SO_EGRESS_SPEC"] == "/d/spec.yml" && proxy["SO_EGRESS_LISTEN"] == "3128")
        #expect(proxy["HTTPS_PROXY"] == nil)
        let worker = env(m, "laconic-d-worker-deployment")
        #expect(
            worker["HTTPS_PROXY"] == "http://egress-proxy:3128" && worker["http_proxy"] == "http://egress-proxy:3128")
        #expect(worker["NO_PROXY"] == "localhost,127.0.0.1,::1,.svc,.cluster.local,app,worker,egress-proxy")
        // A proxy the compose file sets itself is kept.
        #expect(env(m, "laconic-d-app-deployment")["HTTPS_PROXY"] == "http://corp-proxy:8080")
        let policy = try #require(m.objects.first { $0.name == "laconic-d-egress-proxy" && $0.kind == "NetworkPolicy" })
        let json = try JSON.parse(Data(policy.json().utf8))
        #expect(json.at("spec", "podSelector", "matchLabels", "app.kubernetes.io/component")?.string == "egress-proxy")
        let rule = json.at("spec", "egress")?.array.first
        #expect((rule?["to"]?.array ?? []).compactMap { $0.at("ipBlock", "cidr")?.string } == ["0.0.0.0/0", "::/0"])
        #expect((rule?["ports"]?.array ?? []).compactMap { $0["port"]?.int } == [443, 22, 80, 9418])
        // Without egress-proxy: none of it.
        let plain = try render("egress: ['https://api.example.com']\n")
        #expect(
            !plain.objects.contains { $0.name == "laconic-d-egress-proxy" }
                && env(plain, "laconic-d-worker-deployment")["HTTPS_PROXY"] == nil)
    }

    @Test func aProxyThatIsNoPodOfItsOwnIsRefused() throws {
        #expect(throws: SoError.self) { try render("egress: [api.example.com]\negress-proxy: nope\n") }
        do {
            _ = try render("egress: [api.example.com]\negress-proxy: egress-proxy\n", perService: false)
            Issue.record("a proxy sharing its pod was accepted")
        } catch let e as SoError {
            #expect(
                e.message.contains("shares its pod with app, worker")
                    && e.hint?.contains("a compose file (pod) of its own") == true, "\(e.message)")
        }
        #expect(throws: SoError.self) { try render("egress-proxy: egress-proxy\n") }
    }
}

/// The proxy itself (config/agent-workspace/egress-proxy.py), run here against a loopback server.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"),
        "needs python3 and curl"))
struct EgressProxyScriptTests {
    func run(_ args: [String]) async throws -> ProcessResult {
        try await LocalProcessRunner().run(args, workingDirectory: nil, environment: nil, timeout: 20)
    }

    @Test func allowsListedNamesAndRefusesTheRestNamingTheSpec() async throws {
        let t = try TempDir("so-proxy-script")
        defer { t.cleanup() }
        try t.write("www/index.html", "hello through the proxy\n")
        let (target, proxyPort) = (17000 + Int.random(in: 0..<400), 17500 + Int.random(in: 0..<400))
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-m", "http.server", "--bind", "127.0.0.1", "--directory", t.file("www"), "\(target)"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        // terminate()'s SIGTERM stays blocked: a child inherits this process's signal mask
        defer { kill(server.processIdentifier, SIGKILL) }
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        proxy.arguments = [Path.join(RepoPaths.root, "config/agent-workspace/egress-proxy.py")]
        proxy.environment = [
            "SO_EGRESS_ALLOW": "localhost,10.0.0.0/8", "SO_EGRESS_PORTS": "\(target)",
            "SO_EGRESS_LISTEN": "\(proxyPort)",
            "SO_EGRESS_SPEC": "/home/me/.so/deployments/ws/spec.yml", "SO_EGRESS_READY": t.file("ready"),
        ]
        proxy.standardOutput = FileHandle.nullDevice
        proxy.standardError = FileHandle.nullDevice
        try proxy.run()
        defer { kill(proxy.processIdentifier, SIGKILL) }
        let via = ["-x", "http://127.0.0.1:\(proxyPort)", "--noproxy", ""]
        var ready = false
        // 30 s at least: under a machine running every suite at once, 5 s were not always enough to start it.
        for _ in 0..<300 where !ready {
            // A look that did not end within 20 s (curl's own 2 s limit: once in CI's busiest minute) is one more
            // "not yet", not the test's end.
            ready =
                (try? await run(
                    ["curl", "-s", "-o", "/dev/null", "--max-time", "2"] + via + ["http://localhost:\(target)/"]
                ))?.exitCode == 0
            if !ready { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        #expect(ready, "the proxy or the server did not start")
        // It marked itself ready, and the readiness probe as compose gives it (`$$` is compose's `$`) ends with
        // success on that mark; without it, it gives up (here after 4 looks instead of 400).
        #expect(t.exists("ready"))
        let probe = try RepoPaths.healthcheck("compose/docker-compose-egress-proxy.yml")
            .replacingOccurrences(of: "-lt 400", with: "-lt 4")
        #expect(probe.contains("/tmp/so-egress-ready"), "\(probe)")
        let marked = try await run([
            "sh", "-c", probe.replacingOccurrences(of: "/tmp/so-egress-ready", with: t.file("ready")),
        ])
        #expect(marked.exitCode == 0, "\(marked.stderr)")
        let unmarked = try await run([
            "sh", "-c", probe.replacingOccurrences(of: "/tmp/so-egress-ready", with: t.file("no")),
        ])
        #expect(unmarked.exitCode == 1, "\(unmarked.stderr)")
        // Allowed: plain HTTP and a CONNECT tunnel, by name.
        #expect(
            try await run(["curl", "-fsS", "--max-time", "5"] + via + ["http://localhost:\(target)/"]).stdout
                == "hello through the proxy\n")
        #expect(
            try await run(["curl", "-fsS", "-p", "--max-time", "5"] + via + ["http://localhost:\(target)/"]).stdout
                == "hello through the proxy\n")
        // Refused at once with a 403 that names the host and the spec file.
        let denied = try await run(
            ["curl", "-s", "-w", "\n%{http_code}", "--max-time", "5"] + via + ["http://not-listed.example:\(target)/"])
        #expect(denied.stdout.hasSuffix("\n403"), "\(denied.stdout)")
        #expect(
            denied.stdout.contains("not-listed.example is not in the egress: list")
                && denied.stdout.contains(
                    "add it to egress: (or the port to egress-ports:) in /home/me/.so/deployments/ws/spec.yml"),
            "\(denied.stdout)")
        let tunnel = try await run(["curl", "-sS", "--max-time", "5"] + via + ["https://not-listed.example/"])
        #expect(tunnel.exitCode == 56 && tunnel.stderr.contains("403"), "\(tunnel.exitCode) \(tunnel.stderr)")
        // A listed host on a port that is not allowed.
        let port = try await run(["curl", "-s", "--max-time", "5"] + via + ["http://localhost:1/"])
        #expect(port.stdout.contains("port 1 is not among the allowed ports"), "\(port.stdout)")
    }
}
