import Foundation
import SoBasics
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy
@testable import SoWorkspace

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

/// port-forward and maintenance-service read the port plan: a port the service does not serve is
/// refused before kubectl runs.
@Suite struct PortPlanReadersTests {
    @Test func portForwardNamesWhatTheServiceServes() async throws {
        let c = try await ClusterHarness()
        _ = try await c.start()
        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", c.id, "port-forward",
            "service/web", ":80",
        ])
        #expect(
            try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "web", ports: [":80"]) == 0)
        await #expect {
            _ = try await ObserveAction(c.ctx).portForward(
                "dep", cluster: c.options, service: "web", ports: ["8080:81"])
        } throws: { e in
            (e as? SoError)?.message == "port-forward: service 'web' has no port 81"
                && (e as? SoError)?.hint == "its ports: 80"
        }
        await #expect {
            _ = try await ObserveAction(c.ctx).portForward("dep", cluster: c.options, service: "nosuch", ports: ["80"])
        } throws: { e in
            (e as? SoError)?.message == "port-forward: no service 'nosuch' in the deployment"
        }
        #expect(c.h.processes.unexpected.isEmpty)
    }

    /// A port written with variables (`"${WEB_PORT:-30080}:${WEB_TARGET:-80}"`, the deployment's config setting
    /// WEB_TARGET) is what port-forward and restart's maintenance-service read, as start published it: they
    /// take render's plan (`Renderer.ports(of:)`) of the interpolated model.
    @Test func anInterpolatedPortIsWhatPortForwardAndMaintenanceServiceRead() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write(
            "app/compose.yaml",
            "services:\n  web:\n    image: nginx:1.27\n    ports: [\"${WEB_PORT:-30080}:${WEB_TARGET:-80}\"]\n"
                + "  api:\n    image: nginx:1.27\n    ports: [\"${API_PORT:-30081}:80\"]\n")
        try await InitAction(c.ctx).run(InitRequest(stack: "./app", config: ["WEB_TARGET=8081"], output: "app.yml"))
        try await CreateAction(c.ctx).run(CreateRequest(specFile: "app.yml", deploymentDir: "appdep"))
        _ = try await StartAction(c.ctx).run(
            StartRequest(directory: "appdep", cluster: c.options, timeout: 30, progress: .plain))
        let (model, manifest) = try RenderAction(c.ctx).load("appdep")
        let (id, namespace) = (model.id, Renderer.namespace(of: model))
        // Start published container port 8081 on NodePort 30080, and api's 80 on 30081.
        let nodePort = c.cluster.object("Service", "\(id)-nodeport-8081-tcp", namespace: namespace)?.at(
            "spec", "ports")?.array.first
        #expect(
            nodePort?["nodePort"]?.int == 30080 && nodePort?["targetPort"]?.int == 8081,
            "\(String(describing: nodePort))")
        #expect(
            try Renderer.ports(of: model).service("web")?.portNumbers == [8081]
                && manifest.ports.service("web")?.portNumbers == [8081])
        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", namespace, "port-forward",
            "service/web", "8080:8081",
        ])
        #expect(
            try await ObserveAction(c.ctx).portForward(
                "appdep", cluster: c.options, service: "web", ports: ["8080:8081"]) == 0)
        c.h.processes.expect([
            "kubectl", "--kubeconfig", c.kubeconfig, "--context", "kind-test", "-n", namespace, "port-forward",
            "service/api", "9000:80",
        ])
        #expect(
            try await ObserveAction(c.ctx).portForward("appdep", cluster: c.options, service: "api", ports: ["9000:80"])
                == 0)
        await #expect {
            _ = try await ObserveAction(c.ctx).portForward(
                "appdep", cluster: c.options, service: "web", ports: ["8080:80"])
        } throws: { e in
            (e as? SoError)?.message == "port-forward: service 'web' has no port 80"
                && (e as? SoError)?.hint == "its ports: 8081"
        }
        #expect(c.h.processes.unexpected.isEmpty)
        // restart keeps the maintenance page's Deployment serving and rolls the rest.
        let spec = try c.h.read("appdep/spec.yml")
        try c.h.tmp.write("appdep/spec.yml", spec + "maintenance-service: web:8081\n")
        try await ObserveAction(c.ctx).restart("appdep", cluster: c.options, wait: false, timeout: 30)
        #expect(c.cluster.calls.contains("patch Deployment \(namespace)/\(id)-api-deployment"))
        #expect(!c.cluster.calls.contains("patch Deployment \(namespace)/\(id)-web-deployment"))
        try c.h.tmp.write("appdep/spec.yml", spec + "maintenance-service: web:80\n")
        await #expect {
            try await ObserveAction(c.ctx).restart("appdep", cluster: c.options, wait: false, timeout: 30)
        } throws: { e in
            (e as? SoError)?.message == "maintenance-service 'web:80': service 'web' has no port 80"
        }
    }

    @Test func maintenanceServiceNeedsAPortTheServiceServes() async throws {
        let c = try await ClusterHarness(appendToSpec: "maintenance-service: web:81\n")
        _ = try await c.start()
        await #expect {
            try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: false, timeout: 30)
        } throws: { e in
            (e as? SoError)?.message == "maintenance-service 'web:81': service 'web' has no port 81"
        }
    }
}
