import Foundation
import SoBasics
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// A port written with a variable (`"${WEB_PORT:-30080}:80"`, as docker's docs show) is parsed once the
/// deployment's values are known: init keeps it as written, create maps the interpolated host port in
/// kind-config.yml, render publishes the same one; in compose files and in the spec's network.ports alike.
@Suite struct PortValuesTests {
    static let compose = "services:\n  web:\n    image: nginx:1.27\n    ports: [\"${WEB_PORT:-30080}:80\"]\n"

    func rendered(_ h: Harness) throws -> String { try RenderAction(h.ctx).manifest("dep").yaml() }
    func kindPorts(_ h: Harness) throws -> [String] {
        try h.read("dep/kind-config.yml").split(separator: "\n").filter { $0.contains("hostPort:") }.map {
            String($0.split(separator: ":")[1]).trimmedSpaces
        }
    }

    @Test func aComposePortWithADefaultWorksFromInitToRender() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", Self.compose)
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        let spec = try h.read("app.yml")
        // As written: a later WEB_PORT in the spec's config still moves it.
        #expect(spec.contains("network:\n  ports:\n    web:\n      - ${WEB_PORT:-30080}:80\n"), "\(spec)")
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        #expect(try kindPorts(h) == ["80", "443", "30080"])
        let yaml = try rendered(h)
        #expect(yaml.contains("nodePort: 30080"), "\(yaml)")
        let report = try RenderAction(h.ctx).report("dep").first { $0.key == "ports" }
        #expect(
            report?.detail.hasSuffix("80/tcp with NodePort 30080 (kind maps host port 30080)") == true,
            "\(String(describing: report))")
    }

    /// `--map-ports-to-host` maps the port as interpolated (its container side).
    @Test func aRecipeMapsTheInterpolatedPort() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write(
            "app/compose.yaml", Self.compose.replacingOccurrences(of: ":80\"", with: ":${WEB_TARGET:-80}/udp\""))
        try await InitAction(h.ctx).run(
            InitRequest(
                stack: "./app", config: ["WEB_TARGET=8080"], mapPortsToHost: "localhost-same", output: "app.yml"))
        #expect(try h.read("app.yml").contains("    web:\n      - 127.0.0.1:8080:8080/udp\n"))
    }

    @Test func theDeploymentsConfigSetsTheComposePort() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", Self.compose)
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", config: ["WEB_PORT=31080"], output: "app.yml"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        #expect(try kindPorts(h) == ["80", "443", "31080"])
        let yaml = try rendered(h)
        #expect(yaml.contains("nodePort: 31080") && !yaml.contains("30080"), "\(yaml)")
    }

    @Test func aSpecPortWithAVariableOverridesTheComposeFile() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", "services:\n  web:\n    image: nginx:1.27\n    ports: [\"80\"]\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        let spec = try h.read("app.yml")
        try h.tmp.write(
            "app.yml", spec.replacingOccurrences(of: "      - '80'\n", with: "      - ${WEB_PORT:-30090}:80\n"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        #expect(try kindPorts(h) == ["80", "443", "30090"])
        #expect(try rendered(h).contains("nodePort: 30090"))

        // The spec's config sets it (create --update rewrites kind-config.yml from the new value).
        try h.tmp.write("app.yml", try h.read("app.yml") + "config:\n  WEB_PORT: '30091'\n")
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep", update: true))
        #expect(try kindPorts(h) == ["80", "443", "30091"])
        let yaml = try rendered(h)
        #expect(yaml.contains("nodePort: 30091") && !yaml.contains("30090"), "\(yaml)")
    }

    /// The shapes laconic-so's specs give network.ports: quoted and bare numbers, HOST:CONTAINER, /udp, a
    /// host IP, and a service with no entries.
    @Test func theSpecPortFormsLaconicSoUses() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let compose = "services:\n  web:\n    image: nginx:1.27\n    ports: [\"80\"]\n"
        try h.tmp.write("app/compose.yaml", compose + "  db:\n    image: postgres:16\n    ports: [\"5432\"]\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        let spec = try h.read("app.yml")
        let forms =
            "    web:\n      - '80'\n      - 8080\n      - '30081:8081'\n      - 53/udp\n      - 0.0.0.0:30054:54/udp\n    db:\n"
        try h.tmp.write(
            "app.yml", spec.replacingOccurrences(of: "    web:\n      - '80'\n    db:\n      - '5432'\n", with: forms))
        #expect(try h.read("app.yml").contains(forms))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        #expect(try kindPorts(h) == ["80", "443", "30081", "30054"])
        let (_, manifest) = try RenderAction(h.ctx).load("dep")
        let web = try #require(manifest.ports.service("web"))
        #expect(web.listens.map(\.description) == ["80/tcp", "8080/tcp", "8081/tcp", "53/udp", "54/udp"])
        #expect(manifest.ports.nodePorts.map(\.nodePort) == [30081, 30054])
        // db's entry is empty: no ports, so its name resolves headless.
        #expect(manifest.ports.service("db")?.reach == .headless)
        let yaml = manifest.yaml()
        #expect(yaml.contains("nodePort: 30081") && yaml.contains("nodePort: 30054"), "\(yaml)")
    }

    @Test func aBadPortAfterInterpolationNamesTheFileAndLine() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", Self.compose)
        await #expect {
            try await InitAction(h.ctx).run(InitRequest(stack: "./app", config: ["WEB_PORT=x"], output: "app.yml"))
        } throws: { e in
            let e = e as? SoError
            return e?.message.hasPrefix("invalid port 'x:80'") == true
                && e?.location?.file.hasSuffix("app/compose.yaml") == true && e?.location?.line == 4
        }
        try await InitAction(h.ctx).run(InitRequest(stack: "./app", output: "app.yml"))
        try h.tmp.write("app.yml", try h.read("app.yml") + "config:\n  WEB_PORT: '99999'\n")
        await #expect {
            try await CreateAction(h.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "dep"))
        } throws: { e in
            let e = e as? SoError
            return e?.message.hasPrefix("invalid port '99999:80'") == true && e?.location?.line == 4
        }
        #expect(!h.fs.exists(h.path("dep")))
    }
}
