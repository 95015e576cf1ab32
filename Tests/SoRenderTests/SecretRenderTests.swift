import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoRender

/// Render builds the Secrets start makes from host values, from values it is given; without values it
/// renders what it always rendered, and no value appears.
@Suite struct SecretRenderTests {
    static let compose = "services:\n  app:\n    image: x\n    environment:\n      SESSION: ${SESSION}\n"
    static let spec =
        "config:\n  SESSION: $generate:hex:16$\n  PLAIN: hello\nimage-pull-secret:\n  server: reg.example\n  username: bot\n  token-env: REG_TOKEN\n"

    func model(_ body: (DeploymentModel) throws -> Void) throws {
        let t = try TempDir("so-secret-render")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n" + Self.spec)
        try t.write("config.env", "PLAIN=hello\n")
        try t.write("compose/docker-compose-p.yml", Self.compose)
        try body(
            try DeploymentLoader.load(
                t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d"))
    }

    @Test func withoutValuesTheOutputIsUnchanged() throws {
        try model { m in
            for placeholders in [false, true] {
                let options = RenderOptions(placeholderSecrets: placeholders)
                let with = try Renderer.render(m, options: options, secrets: nil).yaml()
                let without = try Renderer.render(m, options: options).yaml()
                #expect(with == without)
            }
            let plain = try Renderer.render(m)
            #expect(!plain.objects.contains { $0.name == DeploymentNames.imagePullSecret(m.id) })
        }
    }

    @Test func valuesBecomeSecretsAfterTheNamespace() throws {
        try model { m in
            let values = SecretValues(
                generated: [("SESSION", SecretValue(text: "s3cr3t-value"))],
                imagePullToken: SecretValue(text: "tok-123"))
            let manifest = try Renderer.render(m, options: RenderOptions(placeholderSecrets: true), secrets: values)
            let names = manifest.objects.prefix(3).map { "\($0.kind)/\($0.name)" }
            #expect(
                names == [
                    "Namespace/\(Renderer.namespace(of: m))", "Secret/\(DeploymentNames.imagePullSecret(m.id))",
                    "Secret/\(DeploymentNames.generatedSecrets(m.id))",
                ])
            // The placeholder is replaced, not kept beside the real Secret.
            #expect(manifest.objects.filter { $0.name == DeploymentNames.generatedSecrets(m.id) }.count == 1)
            let generated = try #require(manifest.objects.first { $0.name == DeploymentNames.generatedSecrets(m.id) })
            #expect(
                generated.labels.map { "\($0.0)=\($0.1)" }
                    == DeploymentNames.hostSecretLabels(m).map { "\($0.0)=\($0.1)" })
            #expect(generated.value["data"]?["SESSION"]?.string == Data("s3cr3t-value".utf8).base64EncodedString())
            let pull = try #require(manifest.objects.first { $0.name == DeploymentNames.imagePullSecret(m.id) })
            #expect(pull.value["type"]?.string == "kubernetes.io/dockerconfigjson")
            let config = try #require(
                pull.value["data"]?[".dockerconfigjson"]?.string.flatMap { Data(base64Encoded: $0) })
            #expect(
                String(decoding: config, as: UTF8.self)
                    == #"{"auths":{"reg.example":{"username":"bot","password":"tok-123","auth":"Ym90OnRvay0xMjM="}}}"#)
            // The workloads are rendered exactly as without values.
            let plain = try Renderer.render(m)
            #expect(
                manifest.objects.filter { $0.kind != "Secret" }.map { $0.yaml() }
                    == plain.objects.filter { $0.kind != "Secret" }.map { $0.yaml() })
        }
    }

    @Test func aValueNeverPrints() {
        let v = SecretValue(text: "hunter2")
        #expect("\(v)" == "<secret>")
        #expect(String(reflecting: v) == "<secret>")
        #expect(!"\(SecretValues(generated: [("K", v)]))".contains("hunter2"))
        #expect(!"\(SecretValues(generated: [("K", v)]))".contains(v.base64))
    }
}
