import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// spec `maintenance-service` (laconic-so): restart sends the Ingress to it while the workloads roll.
@Suite struct MaintenanceServiceTests {
    @Test func restartDivertsTheIngressAndPutsItBack() async throws {
        let c = try await ClusterHarness(appendToSpec: "maintenance-service: web:80\n")
        let spec = try c.h.read("dep/spec.yml")
        try c.h.tmp.write(
            "dep/spec.yml",
            spec.replacingOccurrences(
                of: "network:\n",
                with:
                    "network:\n  http-proxy:\n    - host-name: shop.localhost\n      routes:\n        - path: /\n          proxy-to: web:80\n"
            ))
        _ = try await c.start()
        let ns = NameRules.dnsLabel(c.id)
        let ingressName = try #require(c.cluster.all.first { $0.0.type.kind == "Ingress" }?.0.name)
        let before = try #require(c.cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules"))
        final class Seen: @unchecked Sendable { var during: JSON? }
        let seen = Seen()
        let cluster = c.cluster
        c.cluster.beforeCall = { call in
            if call.hasPrefix("patch Ingress"), seen.during == nil,
                cluster.calls.filter({ $0.hasPrefix("patch Ingress") }).count == 2
            {
                seen.during = cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules")
            }
        }
        try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: true, timeout: 30)
        let backend = seen.during?.array.first?.at("http", "paths")?.array.first?["backend"]
        #expect(
            backend?.at("service", "name")?.string == "web" && backend?.at("service", "port", "number")?.int == 80,
            "\(String(describing: seen.during))")
        #expect(c.cluster.object("Ingress", ingressName, namespace: ns)?.at("spec", "rules") == before)
        #expect(c.h.console.stdout.contains("serving web:80 (maintenance-service) while the deployment restarts"))
    }

    @Test func aBadValueNamesTheSpec() async throws {
        let c = try await ClusterHarness(appendToSpec: "maintenance-service: nosuch:80\n")
        _ = try await c.start()
        await #expect {
            try await ObserveAction(c.ctx).restart("dep", cluster: c.options, wait: false, timeout: 30)
        } throws: { e in
            (e as? SoError)?.message == "maintenance-service 'nosuch:80' names no service of the stack"
        }
    }
}
