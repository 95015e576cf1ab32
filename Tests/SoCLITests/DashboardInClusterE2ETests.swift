import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The team's page of examples/dashboard as written (its image, and the e2e tier's ingress class and host put in):
/// `so dashboard` in a pod with the example's read-only role, reached through its Ingress (Traefik), refuses a
/// request without the token, lets the token's cookie in, lists the `so` deployments of the cluster (read with
/// the service account, across namespaces) and refuses every action.
@Suite(
    .serialized,
    RealNode.required,
    .enabled(if: Traefik.enabled, "SO_E2E_TRAEFIK is not set: no ingress controller on the node (.ci/run installs one)")
)
struct DashboardInClusterE2ETests {
    @Test func theExampleServesATeamsPageThroughItsIngress() async throws {
        let t = try TempDir("so-e2e-dashboard-cluster")
        defer { t.cleanup() }
        let image = try await SoImage.image(in: t)
        let seen = "so-e2e-seen-\(Access.suffix())"
        let host = "so-dashboard-\(Access.suffix()).e2e.test"
        var text = try String(
            contentsOfFile: Path.join(RepoPaths.root, "examples/dashboard/so-dashboard.yml"), encoding: .utf8)
        for (from, to) in [
            ("image: registry.example.org/so:1.0", "image: \(image)\n          imagePullPolicy: IfNotPresent"),
            ("ingressClassName: caddy", "ingressClassName: traefik"), ("so.example.org", host),
            ("    cert-manager.io/cluster-issuer: letsencrypt-prod   # or your own TLS Secret under spec.tls\n", ""),
        ] {
            guard text.contains(from) else { throw SoError("the example no longer says \(from)") }
            text = text.replacingOccurrences(of: from, with: to)
        }
        try t.write("dashboard.yml", text)
        let token = String(repeating: "5a", count: 32)
        defer {
            for args in [
                ["delete", "-f", t.file("dashboard.yml"), "--wait=false", "--ignore-not-found"],
                ["delete", "namespace", seen, "--wait=false", "--ignore-not-found"],
            ] {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                p.arguments = ["kubectl", "--kubeconfig", E2E.kubeconfig ?? ""] + args
                p.standardOutput = FileHandle.nullDevice
                // Best effort: a namespace left is removed by the next run's purge of the node.
                try? p.run()
                p.waitUntilExit()
            }
        }
        // A namespace as `so` labels one: the page must list it.
        var r = try await E2E.kubectl(["create", "namespace", seen])
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.kubectl([
            "label", "namespace", seen, "app.kubernetes.io/managed-by=so", "app.kubernetes.io/instance=laconic-seen",
            "app.kubernetes.io/stack=seen-stack",
        ])
        r = try await E2E.kubectl(["annotate", "namespace", seen, "laconic.com/deployment-dir=/teams/\(seen)"])
        r = try await E2E.kubectl(["apply", "-f", t.file("dashboard.yml")])
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.kubectl([
            "-n", "so-dashboard", "create", "secret", "generic", "so-dashboard-token", "--from-literal=token=\(token)",
        ])
        #expect(r.exitCode == 0, "\(r.stderr)")
        r = try await E2E.kubectl([
            "-n", "so-dashboard", "rollout", "status", "deployment/so-dashboard", "--timeout=180s",
        ])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        func curl(_ args: [String]) async throws -> ProcessResult {
            try await Access.run(["curl", "-s", "-H", "Host: \(host)", "--max-time", "10"] + args)
        }
        // The route appears when Traefik has read the Ingress.
        var status = ""
        for _ in 0..<50 {
            status = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:18080/healthz"]).stdout
            if status == "200" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(status == "200", "the page's /healthz through the Ingress: \(status)")
        r = try await curl(["-i", "http://127.0.0.1:18080/"])
        #expect(r.stdout.hasPrefix("HTTP/1.1 403") && r.stdout.hasSuffix("\r\n\r\nforbidden\n"), "\(r.stdout)")
        r = try await curl(["-i", "http://127.0.0.1:18080/?token=\(token)"])
        #expect(r.stdout.contains("so-dashboard-7878=\(token); Path=/; HttpOnly; SameSite=Strict"), "\(r.stdout)")
        let cookie = "so-dashboard-7878=\(token)"
        var page = ""
        for _ in 0..<50 {
            page = try await curl(["-b", cookie, "http://127.0.0.1:18080/"]).stdout
            if page.contains(seen) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(page.contains(">\(seen)</a>") && page.contains("seen-stack"), "the team's page lists \(seen):\n\(page)")
        #expect(!page.contains("<form"), "a read-only page has no forms")
        r = try await curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-b", cookie, "-d", "action=stop&namespace=\(seen)&csrf=x",
            "http://127.0.0.1:18080/actions",
        ])
        #expect(r.stdout == "403", "an action on the read-only page: \(r.stdout)")
    }
}
