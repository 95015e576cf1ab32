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

/// A plain compose file as a stack: init → create → start against the fake cluster, with compose
/// secrets (file, environment) and configs.
@Suite struct ComposeStackTests {
    @Test func secretsAndConfigsOfAPlainComposeFile() async throws {
        let c = try await ClusterHarness(stack: "example")  // for its kubeconfig and fake cluster
        try c.h.tmp.write("app/compose.yaml", ComposeProjects.shop)
        try c.h.tmp.write("app/secrets/db.txt", "hunter2-not-real\n")
        try c.h.tmp.write("app/init.sql", "create table t(x int);\n")
        var ctx = c.ctx
        ctx.environment["API_TOKEN"] = "tok-not-real"
        try await InitAction(ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        #expect(
            try c.h.read("app.yml").hasPrefix("stack: \(LocalFileSystem().realpath(c.h.path("app/compose.yaml")))\n"))
        try await CreateAction(ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        // The config file is copied; the secret file is not.
        #expect(c.h.fs.isFile(c.h.path("appdep/compose/init.sql")))
        #expect(!c.h.fs.exists(c.h.path("appdep/compose/secrets")))
        _ = try await StartAction(ctx).run(
            StartRequest(directory: "appdep", cluster: c.options, timeout: 30, progress: .plain))
        let ns = try #require(
            c.cluster.all.first { $0.0.type.kind == "Namespace" && $0.1.labels["app.kubernetes.io/stack"] == "app" }?.1)
        let id = try #require(ns.labels["app.kubernetes.io/instance"])
        let secret = try #require(c.cluster.object("Secret", "\(id)-secret-db-password", namespace: ns.name))
        #expect(secret.at("data", "content")?.string == Data("hunter2-not-real\n".utf8).base64EncodedString())
        #expect(
            c.cluster.object("Secret", "\(id)-secret-api-token", namespace: ns.name)?.at("data", "content")?.string
                == Data("tok-not-real".utf8).base64EncodedString())
        // One Deployment per service; mounts where compose puts them.
        let db = try #require(c.cluster.object("Deployment", "\(id)-db-deployment", namespace: ns.name))
        let mounts = db.at("spec", "template", "spec", "containers")?.array.first?["volumeMounts"]?.array ?? []
        let paths = mounts.compactMap { $0["mountPath"]?.string }
        #expect(
            paths.contains("/run/secrets/db-password") && paths.contains("/run/secrets/token")
                && paths.contains("/docker-entrypoint-initdb.d/init.sql"))
        #expect(c.cluster.object("Deployment", "\(id)-web-deployment", namespace: ns.name) != nil)
        #expect(
            c.cluster.object("ConfigMap", "\(id)-config-site", namespace: ns.name)?.at("data", "content")?.string
                == "server { listen 80; }")
        // No secret value in output or in the deployment directory.
        #expect(
            !c.h.console.stdout.contains("hunter2") && !c.h.console.stderr.contains("hunter2")
                && !c.h.console.stdout.contains("tok-not-real"))
        for f in try c.h.fs.walk(c.h.path("appdep")) where f.kind == .file {
            let text = (try? c.h.fs.readText(c.h.path("appdep/\(f.relative)"))) ?? ""
            #expect(!text.contains("hunter2") && !text.contains("tok-not-real"), "\(f.relative)")
        }
        // Render (for reading) shows placeholders, never values.
        let rendered = try RenderAction(ctx).manifest("appdep", placeholderSecrets: true).yaml()
        #expect(rendered.contains("\(id)-secret-db-password") && !rendered.contains("hunter2"))
    }

    /// rotate-secrets applies the generated-secrets Secret start builds (`StartManifest`): the same name,
    /// labels, annotations and keys, only the rotated values new (compose secrets beside it included), and
    /// the start after it finds that Secret as it would apply it.
    @Test func rotateSecretsAppliesTheSecretStartApplies() async throws {
        let c = try await ClusterHarness(stack: "example")
        try c.h.tmp.write("app/compose.yaml", ComposeProjects.shop)
        try c.h.tmp.write("app/secrets/db.txt", "hunter2-not-real\n")
        try c.h.tmp.write("app/init.sql", "create table t(x int);\n")
        var ctx = c.ctx
        ctx.environment["API_TOKEN"] = "tok-not-real"
        try await InitAction(ctx).run(
            InitRequest(
                stack: "./app", config: ["SESSION=$generate:hex:16$", "PIN=$generate:alnum:6$"], output: "app.yml"))
        try await CreateAction(ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        let start = {
            try await StartAction(ctx).run(
                StartRequest(directory: "appdep", cluster: c.options, timeout: 30, progress: .plain))
        }
        _ = try await start()
        let model = try RenderAction(ctx).model("appdep")
        let (name, namespace) = (DeploymentNames.generatedSecrets(model.id), Renderer.namespace(of: model))
        let started = try #require(c.cluster.object("Secret", name, namespace: namespace))
        #expect(
            try await ObserveAction(ctx).rotateSecrets("appdep", cluster: c.options, keys: ["PIN"], timeout: 30) == [
                "PIN"
            ])
        #expect(c.h.console.stdout.contains("rotated PIN"))
        let rotated = try #require(c.cluster.object("Secret", name, namespace: namespace))
        #expect(rotated.labels == started.labels && rotated["type"] == started["type"])
        let hash = KubeObject.appliedHashAnnotation
        let revision = ConfigRevisions.revision
        #expect(
            rotated.annotations.filter { $0.key != hash && $0.key != revision }
                == started.annotations.filter { $0.key != hash && $0.key != revision })
        #expect(started.annotations[revision] == "1" && rotated.annotations[revision] == "2", "one revision up")
        #expect(
            rotated["data"]?.object.keys.sorted() == ["PIN", "SESSION"]
                && started["data"]?.object.keys.sorted() == ["PIN", "SESSION"])
        #expect(
            rotated["data"]?["SESSION"] == started["data"]?["SESSION"]
                && rotated["data"]?["PIN"] != started["data"]?["PIN"])
        // Start builds the same Secret from the values rotate-secrets stored: it has nothing to send.
        let before = c.cluster.calls.count
        let report = try await start()
        #expect(!c.cluster.calls[before...].contains { $0.hasPrefix("apply Secret") }, "\(c.cluster.calls[before...])")
        #expect(report.unchanged.contains("Secret \(namespace)/\(name)"), "\(report.unchanged)")
        #expect(c.cluster.object("Secret", name, namespace: namespace)?["data"] == rotated["data"])
    }

    @Test func aMissingSecretFileFailsAtCreate() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", ComposeProjects.shop)
        try h.tmp.write("app/init.sql", "x\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        await #expect {
            try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        } throws: { e in
            let err = e as? SoError
            return err?.message.hasPrefix("secret 'db-password' file not found:") == true && err?.location?.line == 17
        }
        #expect(!h.fs.exists(h.path("appdep")))
    }

    /// A directory with compose.yaml and compose.override.yaml, or `--stack a.yaml,b.yaml`: merged, and the
    /// deployment directory gets the one flattened file.
    @Test func overrideFilesAndCommaListsAreMerged() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", "services:\n  web:\n    image: nginx:1\n    ports: [\"8080:80\"]\n")
        try h.tmp.write("app/compose.override.yaml", "services:\n  web:\n    image: nginx:2\n")
        try h.tmp.write("app/compose.prod.yaml", "services:\n  web:\n    ports: !override [\"30443:443\"]\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "dev.yml"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "dev.yml", deploymentDir: "dev"))
        let dev = try h.read("dev/compose/docker-compose-app.yml")
        #expect(
            dev.contains("image: nginx:2")
                && dev.hasPrefix("# flattened by so from: compose.yaml, compose.override.yaml"))
        try await InitAction(h.ctx).run(
            InitRequest(stack: "./app/compose.yaml,./app/compose.prod.yaml", output: "prod.yml"))
        #expect(
            try h.read("prod.yml").contains(
                "stack: \(LocalFileSystem().realpath(h.path("app/compose.yaml"))),\(LocalFileSystem().realpath(h.path("app/compose.prod.yaml")))"
            ))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "prod.yml", deploymentDir: "prod"))
        let model = try DeploymentLoader.load(h.path("prod"), fs: h.fs, diagnostics: DiagnosticSink())
        let web = try #require(model.pods.first?.compose.service("web"))
        #expect(web.image == "nginx:1" && web.ports.map(\.raw) == ["30443:443"])
        // `-f a -f b` reaches init as a list, not a joined string: the same spec.
        var files = InitRequest(stack: "", output: "files.yml")
        files.composeFiles = ["app/compose.yaml", "app/compose.prod.yaml"]
        try await InitAction(h.ctx).run(files)
        #expect(try h.read("files.yml") == (try h.read("prod.yml")))
        var one = InitRequest(stack: "", output: "one.yml")
        one.composeFiles = ["app/compose.yaml"]
        try await InitAction(h.ctx).run(one)
        #expect(try h.read("one.yml").contains("stack: \(LocalFileSystem().realpath(h.path("app/compose.yaml")))\n"))
    }

    @Test func envFilesReachTheContainerUnderEnvironment() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write(
            "app/compose.yaml",
            "services:\n  web:\n    image: nginx:1\n    env_file: [.env, {path: ./missing.env, required: false}]\n    environment:\n      B: from-environment\n"
        )
        try h.tmp.write("app/.env", "A=from-file\nB=from-file\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "s.yml"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "s.yml", deploymentDir: "dep"))
        let model = try DeploymentLoader.load(h.path("dep"), fs: h.fs, diagnostics: DiagnosticSink())
        let env = try #require(model.pods.first?.compose.service("web")).environment
        #expect(env.map { "\($0.key)=\($0.value ?? "")" } == ["A=from-file", "B=from-environment"])
    }
}
