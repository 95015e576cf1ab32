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

@Suite struct LocalImageTests {
    /// A deployment whose web image is `cerc/example:local`, on the host's kind cluster `shared` (its context in
    /// the user's kubeconfig), with every program installed.
    static func harness(environment: [String: String] = [:]) async throws -> ClusterHarness {
        let c = try await ClusterHarness(environment: environment)
        let compose = try c.h.read("dep/compose/docker-compose-example.yml")
        try c.h.tmp.write(
            "dep/compose/docker-compose-example.yml",
            compose.replacingOccurrences(of: "image: nginx:1.27-alpine", with: "image: cerc/example:local"))
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        c.h.processes.missing = []
        return c
    }
    /// `docker build` of a `:local` image between two starts: the second finds a new ID, loads the image into
    /// kind, and the Deployment that runs it is applied again with the new ID in its pod template (so its
    /// pods roll onto the rebuilt image), though nothing else changed.
    @Test func aRebuiltLocalImageIsLoadedAndItsDeploymentRolled() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        func start() async throws {
            _ = try await StartAction(c.ctx).run(
                StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
            #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        }
        func annotation() throws -> String? {
            let d = try #require(c.cluster.all.first { $0.0.type.kind == "Deployment" }?.1)
            return d.at("spec", "template", "metadata", "annotations", "so.dev/image-ids")?.string
        }
        // First start: the node has this build already.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        try await start()
        #expect(try annotation() == "cerc/example:local@sha256:aaa")
        // The same build again: nothing loaded, nothing applied.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        var before = c.cluster.calls.count
        try await start()
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply") })
        // Rebuilt: a new ID, loaded into the node, the Deployment applied with it.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:bbb\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        p.expect(["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"])
        before = c.cluster.calls.count
        try await start()
        #expect(
            c.cluster.calls[before...].contains { $0.hasPrefix("apply Deployment") }, "\(c.cluster.calls[before...])")
        #expect(try annotation() == "cerc/example:local@sha256:bbb")
    }

    /// `start --skip-cluster-management` loads no image and stamps no ID; its dry run plans the same start, so
    /// right after it every object is unchanged (the dry run reading IDs the start never stamped said
    /// "would configure" for the Deployment running the local image).
    @Test func theDryRunOfASkipClusterManagementStartStampsNoImageIDs() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let skip = ClusterOptions(performClusterManagement: false)
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: skip, timeout: 30, progress: .plain))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        let plan = try await StartAction(c.ctx).run(StartRequest(directory: "dep", cluster: skip, dryRun: true)).plan
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(!plan.isEmpty && plan.allSatisfy { $0.action == .unchanged }, "\(plan.map(\.line))")
    }

    /// A spec `wait-image:` this host has is loaded and its ID stamped on the Deployments that wait with it, and
    /// the dry run stamps the same images start does: right after the start, every object is unchanged.
    @Test func theDryRunStampsTheSpecsWaitImageAsStartDoes() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        try c.h.tmp.write(
            "app/compose.yaml",
            """
            services:
              db:
                image: postgres:17
                ports: ["5432"]
              web:
                image: nginx:1.27
                depends_on: [db]
            """)
        try await InitAction(c.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        try c.h.tmp.write("app.yml", try c.h.read("app.yml") + "wait-image: so-test/wait:1\n")
        // create: the host's cluster, reached by its context afterwards
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "so-test/wait:1"]
        p.expect(inspect, stdout: "sha256:ccc\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "so-test/wait:1",
            ],
            stdout: "sha256:ccc\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "appdep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let web = try #require(
            c.cluster.all.first { $0.0.type.kind == "Deployment" && $0.1.name.hasSuffix("-web-deployment") }?.1)
        #expect(
            web.at("spec", "template", "metadata", "annotations", ImageLoader.annotation)?.string
                == "so-test/wait:1@sha256:ccc")
        p.expect(inspect, stdout: "sha256:ccc\n")
        let plan = try await StartAction(c.ctx).run(
            StartRequest(directory: "appdep", cluster: ClusterOptions(), dryRun: true)
        ).plan
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(!plan.isEmpty && plan.allSatisfy { $0.action == .unchanged }, "\(plan.map(\.line))")
    }

    /// A spec `caddy-ingress-image` this host has (a host that cannot pull the default one) is loaded into kind,
    /// and the controller is installed only once it is there.
    @Test func theSpecsIngressImageIsLoadedBeforeTheControllerIsInstalled() async throws {
        let c = try await IngressControllerTests.withProxy()
        try c.h.tmp.write(
            "dep/spec.yml", try c.h.tmp.read("dep/spec.yml") + "caddy-ingress-image: so-e2e/ingress:local\n")
        try c.h.tmp.write(
            "user-kubeconfig", ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: "kind-shared"))
        let p = c.h.processes
        p.missing = []
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["docker", "image", "inspect", "--format", "{{.Id}}", "so-e2e/ingress:local"], stdout: "sha256:ccc\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "so-e2e/ingress:local",
            ],
            exitCode: 1, stderr: "no such image")
        // A load that takes a while (as a real one does): the install must wait for it.
        let loaded = Flag()
        let loadedFirst = Flag()
        p.fallback = { args in
            guard args == ["kind", "load", "docker-image", "so-e2e/ingress:local", "--name", "shared"] else {
                return nil
            }
            try await Task.sleep(for: .milliseconds(300))
            loaded.value = true
            return ProcessResult(exitCode: 0, stdout: "", stderr: "")
        }
        let healthy = c.cluster.onApply
        c.cluster.onApply = { json in
            if json["metadata"]?["name"]?.string == "caddy-ingress-controller", json["kind"]?.string == "Deployment" {
                loadedFirst.value = loaded.value
            }
            healthy?(&json)
        }
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(loaded.value && loadedFirst.value)
        let controller = try #require(
            c.cluster.object("Deployment", "caddy-ingress-controller", namespace: "caddy-system"))
        #expect(
            controller.at("spec", "template", "spec", "containers")?.array.first?["image"]?.string
                == "so-e2e/ingress:local")
    }

    /// With KIND_EXPERIMENTAL_PROVIDER=podman the image's ID comes from podman (bare, no `sha256:`, compared with
    /// crictl's), and a rebuilt image reaches the node through an archive: `kind load docker-image` would read
    /// docker's store, which a podman host may not have. The archive is removed afterwards.
    @Test func podmansImagesGoThroughAnArchive() async throws {
        let c = try await Self.harness(environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman"])
        var ctx = c.ctx
        ctx.environment["TMPDIR"] = c.h.tmp.file("tmp")
        let p = c.h.processes
        let inspect = ["podman", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "podman", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        let start = StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain)
        // The node has this build: the same digest, written two ways.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        _ = try await StartAction(ctx).run(start)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        // Rebuilt: saved by podman into an archive, which kind loads.
        final class Archive: @unchecked Sendable {
            var saved: String?
            var loaded: String?
        }
        let archive = Archive()
        // podman would name the short reference localhost/… in its archive: it is saved under the name the node
        // resolves, tagged for the save and untagged after (podman had no such name before).
        p.fallback = { args in
            if args.count == 5, args.starts(with: ["podman", "save", "-o"]), args[4] == "docker.io/cerc/example:local" {
                archive.saved = args[3]
                try "image".write(toFile: args[3], atomically: true, encoding: .utf8)
                return ProcessResult(exitCode: 0)
            }
            if args.count == 6, args.starts(with: ["kind", "load", "image-archive"]),
                args[4...] == ["--name", "shared"]
            {
                archive.loaded = FileManager.default.fileExists(atPath: args[3]) ? args[3] : nil
                return ProcessResult(exitCode: 0)
            }
            return nil
        }
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "bbb\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        p.expect(
            ["podman", "image", "inspect", "--format", "{{.Id}}", "docker.io/cerc/example:local"], exitCode: 1,
            stderr: "image not known")
        p.expect(["podman", "tag", "cerc/example:local", "docker.io/cerc/example:local"])
        p.expect(["podman", "untag", "cerc/example:local", "docker.io/cerc/example:local"])
        _ = try await StartAction(ctx).run(start)
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let saved = try #require(archive.saved)
        #expect(archive.loaded == saved && saved.hasPrefix(c.h.tmp.file("tmp") + "/"), "\(saved)")
        #expect(
            !FileManager.default.fileExists(atPath: saved)
                && !FileManager.default.fileExists(atPath: Path.dirname(saved)))
        #expect(!p.calls.contains { $0.arguments.starts(with: ["kind", "load", "docker-image"]) })
    }

    /// The tag added for a podman load that cannot be removed again is named in a warning (it used to stay
    /// on the user's image without a word); the load itself went through.
    @Test func aTagThatCannotBeRemovedAfterAPodmanLoadWarns() async throws {
        let c = try await Self.harness(environment: ["KIND_EXPERIMENTAL_PROVIDER": "podman"])
        var ctx = c.ctx
        ctx.environment["TMPDIR"] = c.h.tmp.file("tmp")
        let p = c.h.processes
        p.fallback = { args in
            if args.count == 5, args.starts(with: ["podman", "save", "-o"]) {
                try "image".write(toFile: args[3], atomically: true, encoding: .utf8)
                return ProcessResult(exitCode: 0)
            }
            return args.starts(with: ["kind", "load", "image-archive"]) ? ProcessResult(exitCode: 0) : nil
        }
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["podman", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"], stdout: "bbb\n")
        p.expect(
            [
                "podman", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}",
                "cerc/example:local",
            ], stdout: "sha256:aaa\n")
        p.expect(
            ["podman", "image", "inspect", "--format", "{{.Id}}", "docker.io/cerc/example:local"], exitCode: 1,
            stderr: "image not known")
        p.expect(["podman", "tag", "cerc/example:local", "docker.io/cerc/example:local"])
        p.expect(
            ["podman", "untag", "cerc/example:local", "docker.io/cerc/example:local"], exitCode: 125,
            stderr: "Error: busy")
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        let warning = ctx.diagnostics.all.first {
            $0.message.hasPrefix("cannot remove the tag docker.io/cerc/example:local")
        }
        #expect(
            warning?.message
                == "cannot remove the tag docker.io/cerc/example:local that loading image cerc/example:local added",
            "\(ctx.diagnostics.all)")
        #expect(warning?.hint == "remove it with 'podman untag cerc/example:local docker.io/cerc/example:local'")
    }

    /// A pod an earlier start left waiting on the image (not yet built then) is made again once the image is
    /// loaded, rather than waiting out kubelet's back-off; a pod waiting on another image is left alone.
    @Test func podsWaitingOnALoadedImageAreMadeAgain() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        func pod(_ name: String, image: String) -> KubeObject {
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: name, namespace: c.id,
                labels: [("app.kubernetes.io/instance", c.id)],
                body: [
                    (
                        "status",
                        .map([
                            (
                                "containerStatuses",
                                .list([
                                    .map([
                                        ("name", .string("web")), ("image", .string(image)),
                                        ("state", .map([("waiting", .map([("reason", .string("ImagePullBackOff"))]))])),
                                    ])
                                ])
                            )
                        ])
                    )
                ])
        }
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id))
        try c.cluster.seed(pod("stuck", image: "docker.io/cerc/example:local"))
        try c.cluster.seed(pod("other", image: "acme/missing:1"))
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"], stdout: "sha256:aaa\n")
        p.expect(
            [
                "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
                "{{.status.id}}", "cerc/example:local",
            ],
            exitCode: 1, stderr: "no such image")
        p.expect(["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"])
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), wait: false, progress: .plain))
        #expect(p.unexpected.isEmpty && p.pending.isEmpty, "\(p.unexpected) \(p.pending)")
        #expect(c.cluster.object("Pod", "stuck", namespace: c.id) == nil)
        #expect(c.cluster.object("Pod", "other", namespace: c.id) != nil)
        #expect(
            c.h.console.stdout.contains("restarting 1 pod waiting on a newly loaded image: stuck"),
            "\(c.h.console.stdout)")
    }

    /// A load that fails is reported, also when every object is already as rendered.
    @Test func aFailedLoadIsReportedOnAStartThatChangesNothing() async throws {
        let c = try await Self.harness()
        let p = c.h.processes
        let inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "cerc/example:local"]
        let onNode = [
            "docker", "exec", "shared-control-plane", "crictl", "inspecti", "-o", "go-template", "--template",
            "{{.status.id}}", "cerc/example:local",
        ]
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, stdout: "sha256:aaa\n")
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain))
        // The node lost the image (pruned): the objects are as rendered, the load runs, and fails.
        p.expect(["kind", "get", "clusters"], stdout: "shared\n")
        p.expect(inspect, stdout: "sha256:aaa\n")
        p.expect(onNode, exitCode: 1, stderr: "no such image")
        p.expect(
            ["kind", "load", "docker-image", "cerc/example:local", "--name", "shared"], exitCode: 1,
            stderr: "ERROR: failed to load image")
        let again = StartRequest(directory: "dep", cluster: ClusterOptions(), timeout: 30, progress: .plain)
        await #expect { _ = try await StartAction(c.ctx).run(again) } throws: { e in
            ((e as? SoError)?.message ?? "").contains("cannot load image cerc/example:local into kind cluster shared")
        }
        #expect(p.pending.isEmpty)
    }
}

/// A flag set from a fake's callback (which runs on the caller's task, one at a time).
private final class Flag: @unchecked Sendable { var value = false }
