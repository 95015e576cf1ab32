import Foundation
import SoBasics
import SoRender
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

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
