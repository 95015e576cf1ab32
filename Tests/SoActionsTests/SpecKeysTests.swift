import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy
@testable import SoWorkspace

/// spec `image-pull-secret` makes the Secret the pods reference (laconic-so's dockerconfigjson), from the host.
@Suite struct ImagePullSecretTests {
    static let spec =
        "image-pull-secret:\n  server: registry.example.org\n  username: deployer\n  token-env: REGISTRY_TOKEN\n"

    @Test func startCreatesTheSecretThePodsReference() async throws {
        let c = try await ClusterHarness(appendToSpec: Self.spec, environment: ["REGISTRY_TOKEN": "tok-123-not-real"])
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        let secret = try #require(c.cluster.object("Secret", "\(c.id)-image-pull-secret", namespace: ns))
        #expect(secret["type"]?.string == "kubernetes.io/dockerconfigjson")
        let encoded = try #require(secret.at("data", ".dockerconfigjson")?.string)
        let config = try JSON.parse(try #require(Data(base64Encoded: encoded)))
        let entry = config.at("auths", "registry.example.org")
        #expect(entry?["username"]?.string == "deployer" && entry?["password"]?.string == "tok-123-not-real")
        #expect(entry?["auth"]?.string == Data("deployer:tok-123-not-real".utf8).base64EncodedString())
        let deployment = try #require(c.cluster.all.first { $0.0.type.kind == "Deployment" }?.1)
        #expect(
            deployment.at("spec", "template", "spec", "imagePullSecrets")?.array.first?["name"]?.string
                == "\(c.id)-image-pull-secret")
        #expect(!c.h.console.stdout.contains("tok-123") && !c.h.console.stderr.contains("tok-123"))
        #expect(try !c.h.listing().contains { (try? c.h.read($0))?.contains("tok-123") == true })
    }

    @Test func aMissingTokenNamesTheSpecLine() async throws {
        let c = try await ClusterHarness(appendToSpec: Self.spec)
        await #expect { _ = try await c.start() } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message.contains("REGISTRY_TOKEN, which is not set") && e.location?.line != nil
                && e.location?.file.hasSuffix("spec.yml") == true
        }
    }
}

/// stack.yml map-form pods' pre_start_command / post_start_command run on the host around the start.
@Suite struct StartCommandsTests {
    static func makeStack(_ t: TempDir) throws -> String {
        try t.write("repos/app/deploy/docker-compose.yml", "services:\n  web:\n    image: nginx:1.27\n")
        try t.write(
            "src/stack-orchestrator/stacks/app/stack.yml",
            """
            version: "1.0"
            name: app
            pods:
              - name: web
                repository: acme/app
                path: deploy
                pre_start_command: ./prepare.sh
                post_start_command: echo ready
            """)
        return t.file("src/stack-orchestrator/stacks/app")
    }

    @Test func theyRunAroundTheStartAndAFailureStopsIt() async throws {
        let t = try TempDir("so-start-commands")
        defer { t.cleanup() }
        let c = try await ClusterHarness(
            stack: try Self.makeStack(t), environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        let p = c.h.processes
        p.expect(["sh", "-c", "./prepare.sh"])
        p.expect(["sh", "-c", "echo ready"])
        _ = try await c.start()
        #expect(p.pending.isEmpty && p.unexpected.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(
            p.calls.first { $0.arguments == ["sh", "-c", "./prepare.sh"] }?.workingDirectory
                == t.file("repos/app/deploy"))
        // A failing pre_start_command stops the start before anything reaches the cluster.
        let before = c.cluster.calls.count
        p.expect(["sh", "-c", "./prepare.sh"], exitCode: 2, stderr: "prepare: no database dump\n")
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message == "pre_start_command of pod web exited 2: prepare: no database dump"
        }
        #expect(
            !c.cluster.calls[before...].contains { $0.hasPrefix("apply ") || $0.hasPrefix("create ") },
            "\(c.cluster.calls[before...])")
    }

    /// A stack that moved away after deploy create: the start goes on without its commands, and says so
    /// (it used to skip them without a word).
    @Test func aStackThatCannotBeResolvedWarnsThatNoCommandsRun() async throws {
        let t = try TempDir("so-start-commands")
        defer { t.cleanup() }
        let c = try await ClusterHarness(
            stack: try Self.makeStack(t), environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        try FileManager.default.removeItem(atPath: t.file("src/stack-orchestrator/stacks/app/stack.yml"))
        _ = try await c.start()
        let p = c.h.processes
        #expect(
            !p.calls.contains { $0.arguments.starts(with: ["sh", "-c"]) } && p.unexpected.isEmpty,
            "\(p.calls.map(\.arguments))")
        let messages = c.ctx.diagnostics.all.map(\.message)
        #expect(
            messages.contains {
                $0.hasPrefix("cannot resolve stack ") && $0.contains(" for its pre_start_commands: ")
                    && $0.hasSuffix("; none run")
            },
            "\(messages)")
    }
}

/// spec `maintenance-service` (laconic-so): restart sends the Ingress to it while the workloads roll.
@Suite struct MaintenanceServiceTests {
    @Test func restartDivertsTheIngressAndPutsItBack() async throws {
        let c = try await ClusterHarness(appendToSpec: "maintenance-service: web:80\n")
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with:
                    "network:\n  http-proxy:\n    - host-name: shop.localhost\n      routes:\n        - path: /\n          proxy-to: web:80\n"
            ))
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        let ingressName = try #require(c.cluster.all.first { $0.0.type.kind == "Ingress" }?.0.name)
        let before = try #require(c.cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules"))
        final class Seen: @unchecked Sendable { var during: JSON? }
        let seen = Seen()
        let cluster = c.cluster
        c.cluster.beforeCall = { call in
            if call.hasPrefix("patch Ingress"), seen.during == nil,
                cluster.calls.filter({ $0.hasPrefix("patch Ingress") }).count == 2
            {
                seen.during = cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules")
            }
        }
        try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: true, timeout: 30)
        let backend = seen.during?.array.first?.at("http", "paths")?.array.first?["backend"]
        #expect(
            backend?.at("service", "name")?.string == "web" && backend?.at("service", "port", "number")?.int == 80,
            "\(String(describing: seen.during))")
        #expect(c.cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules") == before)
        #expect(c.h.console.stdout.contains("serving web:80 (maintenance-service) while the deployment restarts"))
    }

    @Test func aBadValueNamesTheSpec() async throws {
        let c = try await ClusterHarness(appendToSpec: "maintenance-service: nosuch:80\n")
        _ = try await c.start()
        await #expect {
            try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: false, timeout: 30)
        } throws: { e in
            (e as? SoError)?.message == "maintenance-service 'nosuch:80' names no service of the stack"
        }
    }
}

/// A container that exits right after it started may count as available for an instant: start looks
/// again a moment later and names it, with its last log lines, instead of reporting success.
@Suite struct CrashAfterAvailableTests {
    @Test func aContainerThatExitsAfterTheRolloutIsNamed() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        var pod = KubeObject(
            apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: ns,
            labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)], body: [])
        pod.body = [
            (
                "status",
                .map([
                    (
                        "containerStatuses",
                        .list([
                            .map([
                                ("name", .string("web")), ("ready", .bool(false)), ("restartCount", .int(1)),
                                ("image", .string("nginx:1.27-alpine")),
                                ("state", .map([("waiting", .map([("reason", .string("CrashLoopBackOff"))]))])),
                            ])
                        ])
                    )
                ])
            )
        ]
        try c.cluster.seed(pod)
        c.cluster.podLogs["\(ns)/web-abc/web"] = "listening\nfatal: cannot open /var/lib/web/db\n"
        await #expect { _ = try await c.start() } throws: { e in
            let m = (e as? SoError)?.message ?? ""
            return m.contains("container web keeps crashing (CrashLoopBackOff)")
                && m.contains("fatal: cannot open /var/lib/web/db")
        }
    }
}
