import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoRender

/// A one-pod laconic-layout deployment directory written by hand; `files` are extra files inside it.
/// A deployment directory of one compose file (pod `p`) and the spec lines `extra`, loaded.
func deployment(
    compose: String, spec extra: String = "", deployTo: String = "k8s-kind", files: [String: String] = [:],
    directories: [String] = [], _ body: (TempDir, DeploymentModel) throws -> Void
) throws {
    let t = try TempDir("so-hosts")
    defer { t.cleanup() }
    try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
    try t.write("stack.yml", "name: s\npods: [p]\n")
    try t.write(
        "spec.yml",
        "stack: /x/stacks/s\ndeploy-to: \(deployTo)\n" + (deployTo == "k8s" ? "kube-config: /x/kc\n" : "") + extra)
    try t.write("config.env", "")
    try t.write("compose/docker-compose-p.yml", compose)
    for (rel, text) in files { try t.write(rel, text) }
    for rel in directories { try LocalFileSystem().createDirectory(t.file(rel)) }
    let model = try DeploymentLoader.load(
        t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d")
    try body(t, model)
}

func podSpec(_ m: Manifest) -> YValue? { m.object("Deployment")?["spec"]?["template"]?["spec"] }

@Suite struct HostGatewayTests {
    static let compose = """
        services:
          app:
            image: x
            extra_hosts:
              - "host.docker.internal:host-gateway"
              - "metadata.internal:169.254.169.254"
        """

    @Test func theAddressGivenToRenderIsUsed() throws {
        try deployment(compose: Self.compose) { _, model in
            let m = try Renderer.render(model, options: RenderOptions(hostGateway: "172.18.0.1"))
            let aliases = podSpec(m)?["hostAliases"]
            #expect(aliases?[0]?["ip"]?.string == "172.18.0.1")
            #expect(aliases?[0]?["hostnames"]?[0]?.string == "host.docker.internal")
            #expect(aliases?[1]?["ip"]?.string == "169.254.169.254")
            #expect(m.warnings.isEmpty, "\(m.warnings)")
            let e = MappingReport.build(model, plan: PortPlan(model), options: RenderOptions(hostGateway: "172.18.0.1"))
                .first { $0.key == "extra_hosts" }
            #expect(
                e?.detail
                    == "hostAliases: host.docker.internal → 172.18.0.1 (host-gateway: kind's docker network gateway); metadata.internal → 169.254.169.254"
            )
            #expect(e?.status == .approximated)
        }
    }

    @Test func theSpecKeyWinsOverWhatStartFound() throws {
        try deployment(compose: Self.compose, spec: "host-gateway: 10.1.2.3\n") { _, model in
            #expect(model.spec.hostGateway == "10.1.2.3")
            let m = try Renderer.render(model, options: RenderOptions(hostGateway: "172.18.0.1"))
            #expect(podSpec(m)?["hostAliases"]?[0]?["ip"]?.string == "10.1.2.3")
            let e = MappingReport.build(model, plan: PortPlan(model)).first { $0.key == "extra_hosts" }
            #expect(
                e?.detail.contains("host.docker.internal → 10.1.2.3 (host-gateway: the spec's host-gateway)") == true,
                "\(e?.detail ?? "")")
        }
    }

    /// `render` without a cluster and without the spec key: the alias is left out, with a warning at the
    /// compose file's extra_hosts line and the hint to set the key; literal addresses stay.
    @Test func withoutAnAddressTheAliasIsLeftOutAndReported() throws {
        try deployment(compose: Self.compose) { t, model in
            let m = try Renderer.render(model)
            let aliases = podSpec(m)?["hostAliases"]
            #expect(aliases?[0]?["ip"]?.string == "169.254.169.254")
            #expect(aliases?[1] == nil)
            #expect(!m.yaml().contains("host-gateway"))
            let w = try #require(m.warnings.first { $0.message.contains("host.docker.internal:host-gateway") })
            #expect(w.location == SourceLocation(file: t.file("compose/docker-compose-p.yml"), line: 4))
            #expect(
                w.message
                    == "extra_hosts 'host.docker.internal:host-gateway' of service 'app' is left out: no address for host-gateway here"
            )
            #expect(w.hint?.contains("'host-gateway: IP' in the spec") == true)
            let e = MappingReport.build(model, plan: PortPlan(model)).first { $0.key == "extra_hosts" }
            #expect(e?.status == .approximated)
            #expect(
                e?.detail.contains(
                    "host.docker.internal:host-gateway left out: no address for host-gateway here (set host-gateway: IP in the spec"
                ) == true, "\(e?.detail ?? "")")
        }
    }

    @Test func onlyHostGatewayAndNoAddressMeansNoHostAliasesAtAll() throws {
        try deployment(
            compose: "services:\n  app:\n    image: x\n    extra_hosts: {host.docker.internal: host-gateway}\n"
        ) { _, model in
            let m = try Renderer.render(model)
            #expect(podSpec(m)?["hostAliases"] == nil)
            #expect(
                MappingReport.build(model, plan: PortPlan(model)).first { $0.key == "extra_hosts" }?.status == .ignored)
        }
    }

    @Test func valuesThatAreNotAddressesAreLeftOut() {
        let r = HostAliases.resolve(
            ["a:10.0.0.1", "b=10.0.0.1", "c:[::1]", "d:not-an-ip", "e:${UNSET}", "nonsense", "f:host-gateway"],
            gateway: nil)
        #expect(r.aliases == [.init(ip: "10.0.0.1", hostnames: ["a", "b"]), .init(ip: "::1", hostnames: ["c"])])
        #expect(r.leftOut.map(\.entry) == ["d:not-an-ip", "e:${UNSET}", "nonsense", "f:host-gateway"])
        #expect(r.leftOut[0].reason == "'not-an-ip' is not an IP address")
    }

    @Test func ipAddressLiterals() {
        for good in ["172.18.0.1", "0.0.0.0", "::1", "fc00:f853:ccd:e793::1", "::ffff:10.0.0.1"] {
            #expect(IPAddress.isValid(good), "\(good)")
        }
        for bad in [
            "host-gateway", "", "172.18.0", "172.18.0.256", "10.0.0.1/8", "example.org", " 10.0.0.1", "fe80::1%eth0",
        ] { #expect(!IPAddress.isValid(bad), "\(bad)") }
    }
}

private func persistentVolume(_ m: Manifest, _ volume: String) -> YValue? {
    m.object("PersistentVolume", "laconic-d-\(volume)")
}

@Suite struct HostPathTypeTests {
    /// The kind of each host path is read at load (through the FileSystem seam) and carried in the model;
    /// render gives a file `File`, a socket `Socket`, a directory or nothing yet `DirectoryOrCreate`.
    @Test func hostPathTypeFollowsWhatTheSourceIs() throws {
        let t = try TempDir("so-hp")
        defer { t.cleanup() }
        try t.write("app.log", "x\n")
        try LocalFileSystem().createDirectory(t.file("dir"))
        try makeUnixSocket(t.file("d.sock"))
        #expect(LocalFileSystem().kind(t.file("d.sock")) == .socket)
        let compose =
            "services:\n  app:\n    image: x\n    volumes: [log:/var/log/app.log, sock:/var/run/docker.sock, dir:/data, fresh:/fresh]\nvolumes: {log: {}, sock: {}, dir: {}, fresh: {}}\n"
        let spec =
            "volumes:\n  log: \(t.file("app.log"))\n  sock: \(t.file("d.sock"))\n  dir: \(t.file("dir"))\n  fresh: \(t.file("nothing-yet"))\n"
        for deployTo in ["k8s-kind", "k8s"] {
            let node = deployTo == "k8s" ? "volume-node: worker-1\n" : ""
            try deployment(compose: compose, spec: spec + node, deployTo: deployTo) { _, model in
                #expect(model.hostPathKinds == ["log": .file, "sock": .socket, "dir": .directory, "fresh": .missing])
                let m = try Renderer.render(model)
                #expect(persistentVolume(m, "log")?["spec"]?["hostPath"]?["type"]?.string == "File")
                #expect(persistentVolume(m, "sock")?["spec"]?["hostPath"]?["type"]?.string == "Socket")
                #expect(persistentVolume(m, "dir")?["spec"]?["hostPath"]?["type"]?.string == "DirectoryOrCreate")
                #expect(persistentVolume(m, "fresh")?["spec"]?["hostPath"]?["type"]?.string == "DirectoryOrCreate")
                let path = persistentVolume(m, "sock")?["spec"]?["hostPath"]?["path"]?.string
                #expect(path == (deployTo == "k8s-kind" ? "/mnt/sock" : t.file("d.sock")))
            }
        }
    }

    /// A symlink (docker.sock often is one) is followed.
    @Test func aSymlinkIsFollowed() throws {
        let t = try TempDir("so-hp")
        defer { t.cleanup() }
        try makeUnixSocket(t.file("real.sock"))
        try FileManager.default.createSymbolicLink(
            atPath: t.file("link.sock"), withDestinationPath: t.file("real.sock"))
        #expect(HostPathKind.of(t.file("link.sock"), fs: LocalFileSystem()) == .socket)
        try t.write("f", "x")
        try FileManager.default.createSymbolicLink(atPath: t.file("link-f"), withDestinationPath: t.file("f"))
        #expect(HostPathKind.of(t.file("link-f"), fs: LocalFileSystem()) == .file)
        #expect(HostPathKind.of(t.file("dangling"), fs: LocalFileSystem()) == .missing)
    }
}

@Suite struct HostBindTests {
    /// A laconic stack's absolute bind is refused unless the spec names its volume, and the refusal says
    /// exactly what to add.
    @Test func absoluteBindsOutsideTheStackNeedTheSpecsOptIn() throws {
        let t = try TempDir("so-hb")
        defer { t.cleanup() }
        try t.write("app.log", "x\n")
        let compose = "services:\n  app:\n    image: x\n    volumes:\n      - \(t.file("app.log")):/var/log/app.log\n"
        let volume = HostPathName.volume(for: t.file("app.log"))
        try deployment(compose: compose) { d, model in
            do {
                _ = try Renderer.render(model)
                Issue.record("expected a refusal")
            } catch let e as SoError {
                #expect(
                    e.message
                        == "host path '\(t.file("app.log"))' is outside the stack and is not mounted unless the spec allows it"
                )
                #expect(
                    e.hint
                        == "to mount it from the host, add '\(volume): \(t.file("app.log"))' under volumes: in the spec, then run 'so deploy create' (or 'deploy create --update'); a directory, file or socket is mounted as it is"
                )
                #expect(e.location == SourceLocation(file: d.file("compose/docker-compose-p.yml"), line: 5))
            }
        }
        try deployment(compose: compose, spec: "volumes:\n  \(volume): \(t.file("app.log"))\n") { _, model in
            let m = try Renderer.render(model)
            #expect(persistentVolume(m, volume)?["spec"]?["hostPath"]?["type"]?.string == "File")
            #expect(persistentVolume(m, volume)?["spec"]?["hostPath"]?["path"]?.string == "/mnt/\(volume)")
            let mount = podSpec(m)?["containers"]?[0]?["volumeMounts"]?[0]
            #expect(mount?["mountPath"]?.string == "/var/log/app.log" && mount?["readOnly"] == nil)
            #expect(m.warnings.isEmpty, "\(m.warnings)")
            let e = MappingReport.build(model, plan: PortPlan(model)).first { $0.key == "volumes" }
            #expect(
                e?.detail
                    == "/var/log/app.log: PersistentVolumeClaim laconic-d-\(volume) on host path \(t.file("app.log"))")
            #expect(e?.status == .mapped)
        }
    }

    /// A relative bind whose source did not exist: deploy create made data/<volume>; it is the host directory,
    /// read-write, on a hostPath volume (no ConfigMap), and stays so when the container has written files there.
    @Test func aBindDirectoryDeployCreateMadeIsMountedFromTheHost() throws {
        let compose =
            "services:\n  app:\n    image: x\n    volumes:\n      - ./foundry/workspace:/workspace\n      - ../config/p/a.conf:/etc/a.conf\n"
        for written in [false, true] {
            var files = ["config/p/a.conf": "x\n"]
            if written { files["data/host-path-foundry-workspace/out.txt"] = "made by the container\n" }
            try deployment(compose: compose, files: files, directories: ["data/host-path-foundry-workspace"]) {
                _, model in
                #expect(model.bindDirectories == ["compose/foundry/workspace": "host-path-foundry-workspace"])
                let m = try Renderer.render(model)
                let pv = persistentVolume(m, "host-path-foundry-workspace")
                #expect(pv?["spec"]?["hostPath"]?["path"]?.string == "/mnt/host-path-foundry-workspace")
                #expect(pv?["spec"]?["hostPath"]?["type"]?.string == "DirectoryOrCreate")
                #expect(m.has("PersistentVolumeClaim", "laconic-d-host-path-foundry-workspace"))
                let mounts = podSpec(m)?["containers"]?[0]?["volumeMounts"]
                #expect(mounts?[0]?["mountPath"]?.string == "/workspace" && mounts?[0]?["readOnly"] == nil)
                // The config file stays a ConfigMap.
                #expect(
                    m.objects.filter { $0.kind == "ConfigMap" }.map(\.name) == ["laconic-d-host-path-config-p-a-conf"])
                #expect(!m.yaml().contains("made by the container"))
                #expect(m.warnings.isEmpty, "\(m.warnings)")
                let e = MappingReport.build(model, plan: PortPlan(model)).first { $0.key == "volumes" }
                #expect(
                    e?.detail.hasPrefix(
                        "/workspace: PersistentVolumeClaim laconic-d-host-path-foundry-workspace on host directory data/host-path-foundry-workspace (made by deploy create: ./foundry/workspace did not exist)"
                    ) == true, "\(e?.detail ?? "")")
            }
        }
    }

    @Test func aMissingBindWithoutItsDirectoryIsStillAnError() throws {
        #expect(throws: SoError.self) {
            try deployment(compose: "services:\n  app:\n    image: x\n    volumes: [./nowhere:/w]\n") { _, _ in }
        }
    }

    @Test func bindDirectoryNames() {
        #expect(BindDirectory.volume(for: "./foundry/workspace") == "host-path-foundry-workspace")
        #expect(BindDirectory.volume(for: "../data/My Files") == "host-path-data-my-files")
        #expect(BindDirectory.volume(for: "./") == "host-path-dir")
        #expect(BindDirectory.volume(for: "./" + String(repeating: "a", count: 80)).count == 63)
        #expect(BindDirectory.path(for: "./x") == "data/host-path-x")
    }
}
