import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct BindCreateTests {
    /// A relative bind whose source does not exist (docker would create it): deploy create makes
    /// data/<volume>, warns at the compose file's line, and mounts it into the kind node.
    @Test func aMissingRelativeBindSourceBecomesADataDirectory() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(hostsBindsStack)
        #expect(h.fs.isDirectory(h.path("dep/data/host-path-hosts-binds-workspace")))
        let compose = Path.join(RepoPaths.root, "Tests/SoRenderTests/Stacks/compose/docker-compose-hosts-binds.yml")
        let w = h.ctx.diagnostics.all.filter {
            $0.message.hasPrefix("bind source './hosts-binds/workspace' does not exist")
        }
        #expect(w.count == 1, "\(h.ctx.diagnostics.all)")
        #expect(w.first?.location == SourceLocation(file: compose, line: 11))
        #expect(w.first?.message.contains("created the empty directory data/host-path-hosts-binds-workspace") == true)
        // The stack itself is not touched.
        #expect(!h.fs.exists(Path.join(RepoPaths.root, "Tests/SoRenderTests/Stacks/compose/hosts-binds")))
        let kindConfig = try h.read("dep/kind-config.yml")
        #expect(
            kindConfig.contains(
                "hostPath: \(h.path("dep/data/host-path-hosts-binds-workspace"))\n        containerPath: /mnt/host-path-hosts-binds-workspace"
            ), "\(kindConfig)")

        // What the container wrote survives an update, which does not warn again.
        try h.tmp.write("dep/data/host-path-hosts-binds-workspace/notes.txt", "mine\n")
        let before = h.ctx.diagnostics.all.count
        _ = try await CreateAction(h.ctx).run(
            CreateRequest(specFile: "dep/spec.yml", deploymentDir: "dep", update: true))
        #expect(try h.read("dep/data/host-path-hosts-binds-workspace/notes.txt") == "mine\n")
        #expect(!h.ctx.diagnostics.all.dropFirst(before).contains { $0.message.hasPrefix("bind source") })
        let model = try RenderAction(h.ctx).model("dep")
        #expect(model.bindDirectories == ["compose/hosts-binds/workspace": "host-path-hosts-binds-workspace"])
        #expect(
            KindMounts.required(model, home: h.fs.homeDirectory).map(\.containerPath) == [
                "/mnt/host-path-hosts-binds-workspace"
            ])
    }

    /// An absolute bind in a laconic stack: refused at create with the exact opt-in; with it, no copy, a
    /// kind mount of the host path, and a File hostPath for a file.
    @Test func absoluteBindsNeedTheSpecsOptInAtCreate() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("host/app.log", "x\n")
        let log = h.path("host/app.log")
        try h.tmp.write("s/stacks/logs/stack.yml", "version: \"1.0\"\nname: logs\npods: [logs]\n")
        try h.tmp.write(
            "s/compose/docker-compose-logs.yml",
            "services:\n  app:\n    image: x\n    volumes:\n      - \(log):/var/log/app.log\n")
        let volume = HostPathName.volume(for: log)
        do {
            try await h.initAndCreate(h.path("s/stacks/logs"))
            Issue.record("expected a refusal")
        } catch let e as SoError {
            #expect(
                e.line
                    == "\(h.fs.realpath(h.path("s/compose/docker-compose-logs.yml"))):5: host path '\(log)' is outside the stack and is not mounted unless the spec allows it",
                "\(e.line)")
            #expect(
                e.hint?.hasPrefix("to mount it from the host, add '\(volume): \(log)' under volumes: in the spec")
                    == true)
        }
        #expect(!h.fs.exists(h.path("dep")))
        let spec = try h.read("spec.yml")
        #expect(spec.contains("volumes: {}\n"), "\(spec)")
        try h.tmp.write(
            "spec.yml", spec.replacingOccurrences(of: "volumes: {}\n", with: "volumes:\n  \(volume): \(log)\n"))
        _ = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        #expect(try h.read("dep/kind-config.yml").contains("hostPath: \(log)\n        containerPath: /mnt/\(volume)"))
        let manifest = try RenderAction(h.ctx).manifest("dep")
        let pv = manifest.objects.first { $0.kind == "PersistentVolume" }
        #expect(pv?.yaml().contains("path: /mnt/\(volume)\n    type: File") == true, "\(pv?.yaml() ?? "")")
    }

    /// A bind under the stack's repositories ($SO_REPO_BASE_DIR, where setup-repositories clones them) needs no
    /// spec entry, as in laconic-so (fixturenet-laconicd binds ~/cerc/laconic-registry-cli); a path beside them still does.
    @Test func bindsUnderTheStacksRepositoriesNeedNoSpecEntry() async throws {
        let h = try Harness(environment: ["SO_REPO_BASE_DIR": "repos"])
        defer { h.tmp.cleanup() }
        try h.tmp.write("repos/registry-cli/README", "x\n")
        try h.tmp.write("repos-other/secret", "x\n")
        let cli = h.path("repos/registry-cli")
        try h.tmp.write("s/stacks/reg/stack.yml", "version: \"1.0\"\nname: reg\npods: [reg]\n")
        try h.tmp.write(
            "s/compose/docker-compose-reg.yml",
            "services:\n  app:\n    image: x\n    volumes:\n      - \(cli):/app/cli\n")
        try await h.initAndCreate(h.path("s/stacks/reg"))
        let volume = HostPathName.volume(for: cli)
        #expect(try h.read("dep/deployment.yml").contains("repo-base-dir: \(h.path("repos"))\n"))
        #expect(try h.read("dep/kind-config.yml").contains("hostPath: \(cli)\n        containerPath: /mnt/\(volume)"))
        let model = try RenderAction(h.ctx).model("dep")
        #expect(model.repoBinds[cli]?.path == cli && model.repoBinds[cli]?.kind == .directory)
        #expect(KindMounts.required(model, home: h.fs.homeDirectory).map(\.containerPath) == ["/mnt/\(volume)"])
        let manifest = try RenderAction(h.ctx).manifest("dep")
        let pv = try #require(manifest.objects.first { $0.kind == "PersistentVolume" })
        #expect(pv.yaml().contains("path: /mnt/\(volume)\n    type: DirectoryOrCreate"), "\(pv.yaml())")
        // The base directory itself, and a path beside it that shares its prefix, are not under it.
        for outside in [h.path("repos"), h.path("repos-other/secret")] {
            try h.tmp.write(
                "s/compose/docker-compose-reg.yml",
                "services:\n  app:\n    image: x\n    volumes:\n      - \(outside):/app/cli\n")
            try h.fs.removeTree(h.path("dep"))
            await #expect(throws: SoError.self) {
                try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
            }
        }
    }

    /// A plain compose file binding the docker socket: deploy init gives it a volume with the host path;
    /// the PersistentVolume has type Socket (the kubelet refuses a socket as DirectoryOrCreate).
    @Test func plainComposeSocketBindIsASocketHostPath() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let tmp = try TempDir("so-sock")  // a short path: Unix socket paths are limited to 107 bytes
        defer { tmp.cleanup() }
        try makeUnixSocket(tmp.file("docker.sock"))
        try h.tmp.write(
            "app/compose.yaml",
            "services:\n  agent:\n    image: x\n    volumes:\n      - \(tmp.file("docker.sock")):/var/run/docker.sock\n"
        )
        try await h.initAndCreate(h.path("app"))
        let manifest = try RenderAction(h.ctx).manifest("dep")
        let pv = try #require(manifest.objects.first { $0.kind == "PersistentVolume" })
        #expect(pv.yaml().contains("type: Socket"), "\(pv.yaml())")
    }
}
