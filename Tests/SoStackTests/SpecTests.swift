import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

@testable import SoStack

func decodeSpec(_ text: String, sink: DiagnosticSink = DiagnosticSink()) throws -> Spec {
    let root = try #require(try YAMLFile.parse(text, file: "spec.yml"))
    return try Spec.decode(root, text: text, path: "spec.yml", diagnostics: sink)
}

func expectError(
    _ expectedLine: String, _ body: () throws -> Void, sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    do {
        try body()
        Issue.record("expected an error: \(expectedLine)", sourceLocation: sourceLocation)
    } catch let e as SoError {
        #expect(e.line.contains(expectedLine), "got: \(e.line)", sourceLocation: sourceLocation)
        #expect(e.hint != nil, sourceLocation: sourceLocation)
    } catch {
        Issue.record("not a SoError: \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct SpecTests {
    @Test func decodesLaconicShapedSpec() throws {
        let spec = try decodeSpec(
            """
            stack: test
            deploy-to: k8s-kind
            config:
              A: x
              ENABLED: true
              COUNT: 5
              QUOTED: 'true'
              S: $generate:hex:16$
            network:
              ports:
                test:
                 - '80'
              http-proxy:
                - host-name: h.example
                  routes:
                    - path: /
                      proxy-to: web:8080
            volumes:
              test-data-bind:
              test-data-auto: ./data/auto
            configmaps:
              test-config: ./configmaps/test-config
            secrets: {test-secret: [TEST_SECRET_KEY]}
            """)
        #expect(spec.stack == "test")
        #expect(spec.deployTo == .k8sKind)
        #expect(spec.config.map(\.value) == ["x", "true", "5", "true", "$generate:hex:16$"])
        #expect(spec.plainConfig.map(\.key) == ["A", "ENABLED", "COUNT", "QUOTED"])
        #expect(spec.ports.first?.entries.map(\.written) == ["80"])
        #expect(
            spec.httpProxy == [HTTPProxy(hostName: "h.example", routes: [.init(path: "/", service: "web", port: 8080)])]
        )
        #expect(spec.volumes.map(\.path) == [nil, "./data/auto"])
        #expect(spec.configmaps.first?.path == "./configmaps/test-config")
        #expect(spec.secrets == ["test-secret"])
    }

    @Test func errorsNameFileAndLine() {
        expectError("spec.yml:3: 'replicas' must be a whole number") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nreplicas: two\n")
        }
        expectError("spec.yml:2: unknown deploy-to 'k8s-kinds'") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kinds\n")
        }
        expectError("spec.yml:2: deploy-to 'compose' is not supported") {
            _ = try decodeSpec("stack: a\ndeploy-to: compose\n")
        }
        expectError("spec.yml:1: spec.yml is missing 'stack'") { _ = try decodeSpec("deploy-to: k8s-kind\n") }
        expectError("spec.yml:4: config value of 'B' must be a single value") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nconfig:\n  B: [1, 2]\n")
        }
        expectError("spec.yml:4: unknown secret type 'alnumx'") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nconfig:\n  B: $generate:alnumx:3$\n")
        }
        expectError("spec.yml:3: namespace 'Bad_NS' is not a valid Kubernetes name") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nnamespace: Bad_NS\n")
        }
        expectError("spec.yml:1: deploy-to k8s needs 'kube-config'") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s\n")
        }
    }

    @Test func unknownTopLevelKeyWarns() throws {
        let sink = DiagnosticSink()
        _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nreplica: 2\n", sink: sink)
        #expect(
            sink.all.map(\.description) == [
                "warning: spec.yml:3: unknown key 'replica' in spec.yml (did you mean 'replicas'?)"
            ])
    }
}

@Suite struct GenerateTokenTests {
    @Test func parsesAndValidates() throws {
        let t = try #require(try GenerateToken.parse("pre-$generate:hex:8$-post"))
        #expect(t == GenerateToken(kind: .hex, length: 8, prefix: "pre-", suffix: "-post"))
        #expect(try GenerateToken.parse("plain") == nil)
        for bad in [
            "$generate:hex$", "$generate:hexx:3$", "$generate:hex:0$", "$generate:hex:1025$",
            "$generate:hex:3$$generate:hex:3$", "$generate::3$",
        ] {
            #expect(throws: SoError.self, "\(bad)") { _ = try GenerateToken.parse(bad) }
        }
    }

    @Test func generatesLaconicCompatibleShapes() throws {
        let e = SeededEntropy(seed: 7)
        let hex = try #require(try GenerateToken.parse("$generate:hex:16$")).generate(using: e)
        #expect(hex.count == 32 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        let b64 = try #require(try GenerateToken.parse("$generate:base64:16$")).generate(using: e)
        #expect(b64.count == 24 && Data(base64Encoded: b64)?.count == 16)
        let alnum = try #require(try GenerateToken.parse("k-$generate:alnum:40$")).generate(using: e)
        #expect(
            alnum.hasPrefix("k-") && alnum.count == 42 && alnum.dropFirst(2).allSatisfy { $0.isLetter || $0.isNumber })
        #expect(hex != (try #require(try GenerateToken.parse("$generate:hex:16$")).generate(using: e)))
    }
}

@Suite struct IdentityTests {
    @Test func idsAreTimeSortableDNSLabels() {
        let e = SeededEntropy(seed: 3)
        let a = DeploymentFile.makeID(now: Date(timeIntervalSince1970: 1_780_000_000), entropy: e)
        let b = DeploymentFile.makeID(now: Date(timeIntervalSince1970: 1_780_000_001), entropy: e)
        #expect(a.range(of: #"^laconic-[0-9a-z]{10}$"#, options: .regularExpression) != nil)
        #expect(a < b)
        #expect(NameRules.isDNSLabel(a))
    }

    @Test func deploymentFileRoundTrips() throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let d = DeploymentFile(clusterID: "laconic-abc", deploymentID: "laconic-def", stackSource: "/x/y")
        try t.write("deployment.yml", d.yaml())
        #expect(
            try DeploymentFile.load(t.file("deployment.yml"), fs: LocalFileSystem(), diagnostics: DiagnosticSink()) == d
        )
        try t.write("old.yml", "cluster-id: laconic-old\n")
        #expect(
            try DeploymentFile.load(t.file("old.yml"), fs: LocalFileSystem(), diagnostics: DiagnosticSink())
                .deploymentID == "laconic-old")
    }
}

@Suite struct HostGatewaySpecTests {
    @Test func hostGatewayIsAnIPAddress() throws {
        #expect(try decodeSpec("stack: s\ndeploy-to: k8s-kind\nhost-gateway: 172.18.0.1\n").hostGateway == "172.18.0.1")
        #expect(try decodeSpec("stack: s\ndeploy-to: k8s-kind\nhost-gateway: 'fc00::1'\n").hostGateway == "fc00::1")
        #expect(try decodeSpec("stack: s\ndeploy-to: k8s-kind\n").hostGateway == nil)
        expectError("spec.yml:3: host-gateway 'docker0' is not an IP address") {
            _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nhost-gateway: docker0\n")
        }
        expectError("spec.yml:3: host-gateway 'host-gateway' is not an IP address") {
            _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nhost-gateway: host-gateway\n")
        }
        // A known key: no "unknown key" warning.
        let sink = DiagnosticSink()
        _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nhost-gateway: 10.0.0.1\n", sink: sink)
        #expect(sink.all.isEmpty, "\(sink.all)")
    }
}

@Suite struct WorkspaceSpecTests {
    @Test func workspaceNamesAServiceAnAbsolutePathAndATask() throws {
        let w = try decodeSpec(
            "stack: s\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  task: claude -p \"$TASK\"\n"
        ).workspace
        #expect(w == WorkspaceSpec(service: "agent", path: "/workspace", task: "claude -p \"$TASK\"", line: 4))
        #expect(try decodeSpec("stack: s\ndeploy-to: k8s-kind\n").workspace == nil)
        expectError("spec.yml:5: workspace path 'src' is not absolute") {
            _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  path: src\n")
        }
        expectError("spec.yml:4: 'workspace' is missing 'service'") {
            _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nworkspace:\n  path: /w\n")
        }
        let sink = DiagnosticSink()
        _ = try decodeSpec("stack: s\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  pth: /w\n", sink: sink)
        #expect(sink.all.map(\.message) == ["unknown key 'pth' in 'workspace'"], "\(sink.all)")
    }
}

@Suite struct KindNodeImageSpecTests {
    @Test func aBadNodeImageIsAnErrorAtItsLineAndATypoGetsASuggestion() throws {
        expectError("spec.yml:3: kind-node-image 'kindest/node v1' is not an image reference") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nkind-node-image: kindest/node v1\n")
        }
        expectError("spec.yml:3: 'kind-node-image' must be") {
            _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nkind-node-image: [a]\n")
        }
        let sink = DiagnosticSink()
        _ = try decodeSpec("stack: a\ndeploy-to: k8s-kind\nkind-node-imag: kindest/node:v1.31.0\n", sink: sink)
        #expect(
            sink.all.map(\.description) == [
                "warning: spec.yml:3: unknown key 'kind-node-imag' in spec.yml (did you mean 'kind-node-image'?)"
            ])
    }

    @Test func imageReferencesCompareAsEnginesSpellThem() {
        #expect(ImageReference.isPlausible("kindest/node:v1.31.0"))
        #expect(ImageReference.isPlausible("reg.example:5000/kind/node@sha256:abc"))
        for bad in ["", "a b", "-x", "x:", "x/", "x;rm"] { #expect(!ImageReference.isPlausible(bad), "\(bad)") }
        #expect(ImageReference.same("kindest/node:v1.31.0@sha256:abc", "kindest/node:v1.31.0"))
        #expect(ImageReference.same("docker.io/kindest/node:v1.31.0", "kindest/node:v1.31.0"))
        #expect(ImageReference.same("docker.io/library/busybox", "busybox:latest"))
        #expect(ImageReference.same("kindest/node@sha256:abc", "kindest/node:v1.31.0@sha256:abc"))
        #expect(!ImageReference.same("kindest/node:v1.30.0", "kindest/node:v1.31.0"))
        #expect(!ImageReference.same("kindest/node:v1.31.0@sha256:abc", "kindest/node:v1.31.0@sha256:def"))
        #expect(!ImageReference.same("reg:5000/node:v1", "reg:5000/other:v1"))
        // As containerd (a kind node) resolves a short reference.
        #expect(ImageReference.qualified("busybox") == "docker.io/library/busybox:latest")
        #expect(ImageReference.qualified("so-e2e/podbuild:local") == "docker.io/so-e2e/podbuild:local")
        #expect(
            ImageReference.qualified("docker.io/cerc/test-container:local") == "docker.io/cerc/test-container:local")
        #expect(ImageReference.qualified("reg:5000/a/b") == "reg:5000/a/b:latest")
        #expect(ImageReference.qualified("localhost/x@sha256:abc") == "localhost/x@sha256:abc")
        #expect(ImageReference.qualified("ghcr.io/acme/app:1") == "ghcr.io/acme/app:1")
    }
}
