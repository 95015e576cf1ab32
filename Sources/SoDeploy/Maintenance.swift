import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// spec `maintenance-service: CONTAINER:PORT` (laconic-so): while `restart` rolls the workloads, every
/// Ingress rule of the deployment sends its traffic to that service's port instead, and is put back once
/// they are ready again.
struct Maintenance {
    let ctx: SoContext
    let c: ConnectedDeployment
    let container: String
    let service: String
    let port: Int
    var originals: [(name: String, rules: JSON)] = []

    init?(ctx: SoContext, c: ConnectedDeployment) throws {
        guard let value = c.model.spec.sections.maintenanceService else { return nil }
        guard let target = ServicePort(value) else {
            throw SoError(
                "maintenance-service '\(value)' is not CONTAINER:PORT",
                hint: "name a compose service of the stack and its port, e.g. maintenance:80",
                at: SourceLocation(file: c.model.spec.path))
        }
        let plan = try Renderer.ports(of: c.model)
        guard let planned = plan.service(target.service) else {
            throw SoError(
                "maintenance-service '\(value)' names no service of the stack",
                hint: "services: " + plan.services.map(\.name).joined(separator: ", "),
                at: SourceLocation(file: c.model.spec.path))
        }
        // The Ingress is sent to the service's own Service, which carries only the ports it listens on.
        guard planned.portNumbers.contains(target.port) else {
            throw SoError(
                "maintenance-service '\(value)': service '\(target.service)' has no port \(target.port)",
                hint: planned.portsHint,
                at: SourceLocation(file: c.model.spec.path))
        }
        self.ctx = ctx
        self.c = c
        container = NameRules.dnsLabel(target.service)
        service = NameRules.serviceName(target.service)
        self.port = target.port
    }

    static let ingress = ResourceType.ingress

    /// Every rule's backends point at the maintenance Service; the rules as they were are kept for `restore`.
    mutating func divert() async throws {
        for ing in try await c.client.list(
            Self.ingress, namespace: c.namespace, labelSelector: DeploymentNames.selector(c.model.id))
        {
            guard let rules = ing.at("spec", "rules") else { continue }
            originals.append((ing.name, rules))
            let diverted = JSON.array(
                rules.array.map { rule in Self.replacingBackends(rule, service: service, port: port) })
            _ = try await c.client.patch(
                Self.ingress, name: ing.name, namespace: c.namespace,
                mergePatch: Data(JSON.object(["spec": .object(["rules": diverted])]).yValue.compactJSON()))
        }
        if !originals.isEmpty {
            ctx.say("serving \(service):\(port) (maintenance-service) while the deployment restarts")
        }
    }

    func restore() async throws {
        for (name, rules) in originals {
            _ = try await c.client.patch(
                Self.ingress, name: name, namespace: c.namespace,
                mergePatch: Data(JSON.object(["spec": .object(["rules": rules])]).yValue.compactJSON()))
        }
        if !originals.isEmpty { ctx.say("ingress restored") }
    }

    static func replacingBackends(_ rule: JSON, service: String, port: Int) -> JSON {
        guard case .object(var r) = rule, case .object(var http)? = r["http"] else { return rule }
        http["paths"] = .array(
            (http["paths"]?.array ?? []).map { path in
                guard case .object(var p) = path else { return path }
                p["backend"] = .object([
                    "service": .object(["name": .string(service), "port": .object(["number": .number(Double(port))])])
                ])
                return .object(p)
            })
        r["http"] = .object(http)
        return .object(r)
    }
}
