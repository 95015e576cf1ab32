import Foundation
import SoBasics
import SoSystem
import SoTestSupport

/// The stand-in GitHub of `GitHubStandIn/standin.py` (a real HTTP server on loopback), started for one test: it
/// sends webhooks as GitHub does to the receiver it is pointed at, serves the REST calls `so` makes, and records them.
struct GitHubStandInServer {
    let process: Process
    /// Its base URL, `GITHUB_API_URL` for `so`.
    let url: String
    let log: String
    static let script = Path.join(RepoPaths.root, "Tests/SoCLITests/GitHubStandIn/standin.py")

    /// A GitHub App it is: the JWTs it takes are signed with `key` (a PEM file), its tokens end after `tokenLife`
    /// seconds and are then the only ones it takes.
    struct App {
        var id: String
        var key: String
        var tokenLife: Int
    }

    /// `listen`: the address it serves on (loopback; the node's address for a loop that runs in a pod). `isPrivate`:
    /// a private repository's (its git endpoint reads only with a token).
    static func start(
        in t: TempDir, repo: String, gitDir: String, token: String, secretFile: String, listen: String = "127.0.0.1",
        app: App? = nil, isPrivate: Bool = false
    ) throws -> GitHubStandInServer {
        let log = t.file("standin-requests.jsonl")
        let portFile = t.file("standin-port")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments =
            [
                "python3", script, "--repo", repo, "--git-dir", gitDir, "--token", token, "--secret-file", secretFile,
                "--port-file", portFile, "--log", log, "--listen", listen,
            ] + (app.map { ["--app-id", $0.id, "--app-key", $0.key, "--token-life", String($0.tokenLife)] } ?? [])
            + (isPrivate ? ["--private"] : [])
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.standardError
        try p.run()
        for _ in 0..<600 {
            if let port = try? String(contentsOfFile: portFile, encoding: .utf8), Int(port) != nil {
                return GitHubStandInServer(process: p, url: "http://\(listen):\(port)", log: log)
            }
            usleep(50_000)
        }
        AgentE2E.stop(p)
        throw SoError("the stand-in GitHub did not start (python3 \(script))")
    }

    /// A control call (`/_standin/WHAT`): its JSON answer.
    @discardableResult
    func call(_ what: String, _ body: [String: Any]) async throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: body)
        let r = try await AgentE2E.run([
            "curl", "-s", "-f", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
            String(decoding: data, as: UTF8.self), "\(url)/_standin/\(what)",
        ])
        guard r.exitCode == 0, let obj = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        else { throw SoError("the stand-in GitHub refused \(what): \(r.stdout)\(r.stderr)") }
        return obj
    }

    /// A sending call's deliveries: (id, event, the receiver's status; 0 when it was not reached).
    func send(_ what: String, _ body: [String: Any]) async throws -> (answer: [String: Any], sent: [Sent]) {
        let answer = try await call(what, body)
        let sent = (answer["deliveries"] as? [[String: Any]] ?? []).map {
            Sent(
                delivery: $0["delivery"] as? String ?? "", event: $0["event"] as? String ?? "",
                status: $0["status"] as? Int ?? -1)
        }
        return (answer, sent)
    }

    struct Sent: Equatable {
        var delivery: String
        var event: String
        var status: Int
    }

    /// Every REST request it answered so far, in order: method, path, query, status, body (JSON) and Authorization.
    func requests() throws -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The comments posted on issue or pull request `number`, their bodies in order.
    func comments(on number: Int, repo: String) throws -> [String] {
        try requests().filter {
            $0["method"] as? String == "POST" && $0["path"] as? String == "/repos/\(repo)/issues/\(number)/comments"
        }.map { ($0["body"] as? [String: Any])?["body"] as? String ?? "" }
    }

    /// The App's tokens it gave, oldest first.
    func tokens() async throws -> [String] {
        let r = try await AgentE2E.run(["curl", "-s", "-f", "\(url)/_standin/tokens"])
        let all = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
        return all.compactMap { $0["token"] as? String }
    }

    /// Its pull requests as GitHub would list them (the head's sha read from the bare repository).
    func pulls() async throws -> [[String: Any]] {
        let r = try await AgentE2E.run(["curl", "-s", "-f", "\(url)/_standin/pulls"])
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
    }
}
