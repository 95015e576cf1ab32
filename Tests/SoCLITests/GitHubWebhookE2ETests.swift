import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// `so dashboard --github-repo … --github-secret-file …` against a real API server: a signed delivery is in the
/// namespace so-github as one Secret before the 202, a redelivery leaves it one, and a restart of the server finds
/// it there (and takes the redelivery as a no-op still). The namespace goes afterwards if this test made it.
@Suite(.serialized, .enabled(if: E2E.kubeconfig != nil, "SO_E2E_KUBECONFIG is not set: no real API server"))
struct GitHubWebhookE2ETests {
    static let secret = "e2e-webhook-secret-" + String(repeating: "5a", count: 16)

    /// `so dashboard` with the webhook on a free port, and that port once it listens.
    static func start(in t: TempDir) throws -> (Process, Int) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: E2E.binary)
        p.arguments = [
            "dashboard", "--port", "0", "--read-only", "--github-secret-file", t.file("secret"), "--github-repo",
            "so-e2e/hooks",
        ]
        p.currentDirectoryURL = URL(fileURLWithPath: t.path)
        var environment = ProcessInfo.processInfo.environment
        environment["SO_KUBECONFIG"] = E2E.kubeconfig!
        environment["SO_HOME"] = t.file("home")
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.standardError
        try p.run()
        let url = try Browser.firstURL(out)
        guard let port = url.split(separator: "/").dropFirst().first?.split(separator: ":").last.flatMap({ Int($0) })
        else { throw SoError("no port in \(url)") }
        return (p, port)
    }

    /// POSTs `body` signed with `secret`: the status, and the seconds it took.
    static func deliver(_ body: String, delivery: String, port: Int, secret: String = secret, in t: TempDir)
        async throws -> (Int, Double)
    {
        try t.write("body.json", body)
        let signature = "sha256=" + HMAC.sha256Hex(key: Array(secret.utf8), message: Array(body.utf8))
        let r = try await LocalProcessRunner().run(
            [
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-X", "POST",
                "-H", "Content-Type: application/json", "-H", "X-GitHub-Event: issues",
                "-H", "X-GitHub-Delivery: \(delivery)", "-H", "X-Hub-Signature-256: \(signature)",
                "--data-binary", "@" + t.file("body.json"), "http://127.0.0.1:\(port)/github/webhook",
            ], workingDirectory: nil, environment: nil, timeout: 60)
        let parts = r.stdout.split(separator: " ")
        return (Int(parts.first ?? "") ?? 0, Double(parts.last ?? "") ?? -1)
    }

    static func stored(_ delivery: String) async throws -> [String] {
        let r = try await E2E.kubectl([
            "-n", "so-github", "get", "secrets", "-l", "so.dev/github-inbox=event", "-o",
            "jsonpath={range .items[*]}{.metadata.annotations.so\\.dev/github-delivery}{\"\\n\"}{end}",
        ])
        return r.stdout.split(separator: "\n").map(String.init).filter { $0 == delivery }
    }

    @Test func aDeliveryIsInTheClusterOnceAndOutlivesTheServer() async throws {
        let t = try TempDir("so-e2e-github")
        defer { t.cleanup() }
        try t.write("secret", Self.secret + "\n")
        let existed = try await E2E.kubectl(["get", "namespace", "so-github"]).exitCode == 0
        defer {
            if !existed {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                p.arguments = [
                    "kubectl", "--kubeconfig", E2E.kubeconfig!, "delete", "namespace", "so-github", "--wait=false",
                ]
                try? p.run()
                p.waitUntilExit()
            }
        }
        let delivery = "e2e-\(UUID().uuidString.lowercased())"
        let body = """
            {"action":"labeled","repository":{"full_name":"so-e2e/hooks"},"sender":{"login":"octocat"},\
            "label":{"name":"so"},"issue":{"number":52,"title":"a title \(delivery)","body":"a body","author_association":"OWNER"}}
            """
        // The entry is named by the body's digest: the same body under another delivery id is the same entry.
        let name = "so.github.body-" + SHA256.hex(Array(body.utf8))
        var (server, port) = try Self.start(in: t)
        defer { server.terminate() }
        let (first, seconds) = try await Self.deliver(body, delivery: delivery, port: port, in: t)
        #expect(first == 202)
        print(
            "github e2e: first delivery answered \(first) in \(seconds) s (the namespace made on the way: \(!existed))")
        #expect(seconds >= 0 && seconds < 10, "GitHub waits 10 s")
        #expect(try await Self.stored(delivery) == [delivery])
        let (again, seconds2) = try await Self.deliver(body, delivery: delivery, port: port, in: t)
        print("github e2e: redelivery answered \(again) in \(seconds2) s")
        #expect(again == 202)
        #expect(
            try await Self.deliver(body, delivery: delivery, port: port, secret: "not-the-secret-at-all", in: t).0
                == 401)
        #expect(try await Self.stored(delivery) == [delivery])
        let replay = "e2e-\(UUID().uuidString.lowercased())"
        #expect(try await Self.deliver(body, delivery: replay, port: port, in: t).0 == 202)
        #expect(try await Self.stored(replay) == [], "a signed body sent again under a new id is not a new entry")
        #expect(try await Self.stored(delivery) == [delivery])
        server.terminate()
        server.waitUntilExit()
        (server, port) = try Self.start(in: t)
        #expect(try await Self.stored(delivery) == [delivery], "the inbox outlives the server")
        let (third, _) = try await Self.deliver(body, delivery: delivery, port: port, in: t)
        #expect(third == 202)
        #expect(try await Self.stored(delivery) == [delivery])
        let json = try await E2E.kubectl([
            "-n", "so-github", "get", "secret", name, "-o", "jsonpath={.data.event}",
        ])
        let event = String(decoding: Data(base64Encoded: json.stdout) ?? Data(), as: UTF8.self)
        #expect(event.contains("\"repository\":\"so-e2e/hooks\"") && event.contains("\"number\":52"), "\(event)")
        #expect(!event.contains(Self.secret))
        _ = try await E2E.kubectl(["-n", "so-github", "delete", "secret", name])
    }
}
