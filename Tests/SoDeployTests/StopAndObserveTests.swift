import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct StopAndObserveTests {
    @Test func stopKeepsVolumesAndSecretsUnlessAsked() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "dep/spec.yml",
            try c.h.read("dep/spec.yml").replacingOccurrences(of: "config:\n", with: "config:\n  K: $generate:hex:8$\n")
        )
        _ = try await c.start()
        try await StopAction(c.ctx).run(StopRequest(directory: "dep", cluster: c.options, volumeGuard: nil))
        let left = c.cluster.all.map { "\($0.0.type.kind) \($0.0.name)" }.sorted()
        // The deployment's record stays: a stop changes what runs, not what the deployment is.
        #expect(
            left == [
                "Namespace \(c.id)", "PersistentVolumeClaim \(c.id)-web-data", "Secret \(c.id)-generated-secrets",
                "Secret so.record.\(c.id).v1",
            ])
        _ = try await c.start()
        try await StopAction(c.ctx).run(
            StopRequest(
                directory: "dep", cluster: c.options, deleteVolumes: true, deleteNamespace: true, volumeGuard: nil))
        #expect(c.cluster.all.isEmpty)
    }

    @Test func statusPsLogsExecRestart() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        try c.cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: c.id,
                labels: [
                    ("app", c.id), ("app.kubernetes.io/instance", c.id), ("app.kubernetes.io/component", "example"),
                ],
                body: [
                    (
                        "spec",
                        .map([
                            (
                                "containers",
                                .list([
                                    .map([
                                        ("name", .string("web")), ("image", .string("nginx")),
                                        ("ports", .list([.map([("containerPort", .int(80))])])),
                                    ])
                                ])
                            )
                        ])
                    )
                ]))
        c.cluster.update("Pod", "web-abc", namespace: c.id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "phase": .string("Running"), "podIP": .string("10.0.0.7"),
                "containerStatuses": .array([
                    .object(["name": .string("web"), "ready": .bool(true), "restartCount": .number(2)])
                ]),
            ])
            p = .object(o)
        }
        let status = try await ObserveAction(c.ctx).status("dep", cluster: c.options)
        #expect(status.ready)
        #expect(status.workloads.map(\.name).sorted() == ["\(c.id)-deployment", "\(c.id)-job-example-migrate"])
        let ps = try await ObserveAction(c.ctx).ps("dep", cluster: c.options)
        #expect(
            ps.count == 1 && ps[0].phase == "Running" && ps[0].ready == "1/1" && ps[0].restarts == 2
                && ps[0].ports == ["web:80"])

        c.cluster.podLogs["\(c.id)/web-abc/web"] = "one\ntwo\nthree\n"
        try await ObserveAction(c.ctx).logs(.init(directory: "dep", cluster: c.options, tail: 2))
        #expect(c.h.console.stdout.hasSuffix("web | two\nweb | three"))

        c.h.processes.expect(
            [
                "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "web-abc", "-c",
                "web", "--", "nginx", "-t",
            ], exitCode: 3)
        let code = try await ObserveAction(c.ctx).exec(
            "dep", cluster: c.options, service: "web", command: ["nginx", "-t"], interactive: false, tty: false)
        #expect(code == 3)
        #expect(c.h.processes.unexpected.isEmpty)
        await #expect(throws: SoError.self) {
            _ = try await ObserveAction(c.ctx).exec(
                "dep", cluster: c.options, service: "nope", command: [], interactive: false, tty: false)
        }

        // shell: the first service by default, interactive, in /workspace when it exists.
        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "exec", "-i", "web-abc",
            "-c", "web", "--", "sh", "-c",
            "cd /workspace 2>/dev/null || true; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi",
        ])
        #expect(try await ObserveAction(c.ctx).shell("dep", cluster: c.options, service: nil) == 0)
        #expect(c.h.processes.unexpected.isEmpty)

        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "port-forward",
            "service/web", "8080:80",
        ])
        #expect(
            try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["8080:80"])
                == 0)
        await #expect(throws: SoError.self) {
            _ = try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: ["x:80"])
        }

        try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: true, timeout: 30)
        let d = try #require(c.cluster.object("Deployment", "\(c.id)-deployment", namespace: c.id))
        #expect(d.at("spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")?.string != nil)
    }
}
