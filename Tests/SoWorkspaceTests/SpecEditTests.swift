import Foundation
import SoBasics
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

/// `up --preview`, `up`'s namespace and `deploy create --ttl` edit the spec through its YAML tree: specs
/// that text patching broke (a key already there, flow style, no trailing newline) come out valid.
@Suite struct SpecEditTests {
    func spec(_ h: Harness, _ rel: String) throws -> Spec {
        try Spec.load(h.path(rel), fs: h.fs, diagnostics: DiagnosticSink())
    }

    @Test func previewJoinsAnExistingHTTPProxyList() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate("agent-workspace", config: ["GIT_REPO=https://example.invalid/r"])
        // Text patching inserted a second 'http-proxy:' under 'network:' here: a duplicate key.
        var text = try h.read("dep/spec.yml")
        #expect(text.contains("\nnetwork:\n  ports: {}\n"))
        text =
            text.replacingOccurrences(of: "\nnetwork:\n  ports: {}\n", with: "\n")
            + "network:\n  http-proxy:\n    - host-name: docs.localhost\n      routes:\n        - path: /docs\n          proxy-to: agent:3000"
        try h.tmp.write("dep/spec.yml", text)
        try UpAction(h.ctx).addPreview(dir: h.path("dep"), host: "ws.localhost", port: 3000)
        let s = try spec(h, "dep/spec.yml")
        #expect(s.httpProxy.map(\.hostName) == ["docs.localhost", "ws.localhost"])
        #expect(s.httpProxy.last?.routes.map(\.path) == ["/"])
        #expect(try h.read("dep/spec.yml").hasSuffix("\n"))
    }

    @Test func previewIntoAFlowStyleNetworkAndAFileWithoutTrailingNewline() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate("agent-workspace", config: ["GIT_REPO=https://example.invalid/r"])
        let made = try h.read("dep/spec.yml").replacingOccurrences(of: "\nnetwork:\n  ports: {}\n", with: "\n")
        try h.tmp.write("dep/spec.yml", "network: {ports: {agent: ['3000']}}\n" + made)
        for extra in ["", "ttl: 2h"] {
            try h.tmp.write(
                "dep/spec.yml", (try h.read("dep/spec.yml")).trimmingCharacters(in: .newlines) + "\n" + extra)
            try UpAction(h.ctx).addPreview(dir: h.path("dep"), host: "ws.localhost", port: 3000)
            let s = try spec(h, "dep/spec.yml")
            #expect(s.httpProxy.last?.hostName == "ws.localhost")
        }
        let s = try spec(h, "dep/spec.yml")
        #expect(s.ports.map(\.service) == ["agent"])
        #expect(s.ttl == 7200)
        #expect(s.httpProxy.count == 2)
    }

    @Test func namespaceReplacesOneThatIsThere() throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        // Appending text made 'namespace:' twice (and glued it to a last line without a newline).
        try h.tmp.write(
            "spec.yml",
            "# my workspace\nstack: agent-workspace\ndeploy-to: k8s-kind\nnamespace: old\nconfig:\n  PORT: 8080\n  MODE: '0755'\n  ON: yes\n  FLAG: True\n  EMPTY:"
        )
        try UpAction(h.ctx).setNamespace("fix-login", specPath: h.path("spec.yml"))
        let text = try h.read("spec.yml")
        #expect(
            text
                == "# my workspace\nstack: agent-workspace\ndeploy-to: k8s-kind\nnamespace: fix-login\nconfig:\n  PORT: 8080\n  MODE: '0755'\n  'ON': 'yes'\n  FLAG: true\n  EMPTY:\n"
        )
        let s = try spec(h, "spec.yml")
        #expect(s.namespace == "fix-login")
        // Every config value reads back as it read before.
        #expect(
            s.config.map { "\($0.key)=\($0.value)" } == ["PORT=8080", "MODE=0755", "ON=yes", "FLAG=true", "EMPTY="])
    }

    @Test func createTTLReplacesAQuotedTTLKey() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(
            InitRequest(stack: Harness.laconicStack("relay"), config: [], output: "spec.yml", force: true))
        // A quoted key escaped the line filter: 'ttl:' twice.
        try h.tmp.write("spec.yml", try h.read("spec.yml") + "\"ttl\": 30m\n")
        var req = CreateRequest(specFile: "spec.yml", deploymentDir: "dep")
        req.ttl = "2h"
        try await CreateAction(h.ctx).run(req)
        let s = try spec(h, "dep/spec.yml")
        #expect(s.ttl == 7200)
        #expect(try h.read("dep/spec.yml").components(separatedBy: "ttl").count == 2)
    }
}
