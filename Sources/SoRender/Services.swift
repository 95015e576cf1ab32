import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Services: one named after each compose service, NodePorts for published host ports, laconic-so's
/// http-proxy Services and the Ingress, and the spec's external services. All read the port plan.
extension RenderState {
    // MARK: Services

    mutating func renderServices(_ pod: ComposeComponent) {
        for svc in pod.compose.services where !svc.isInitContainer {
            guard let planned = ports.service(svc.name), planned.reach != .none else { continue }
            let name = NameRules.serviceName(svc.name)
            if name != svc.name {
                warn(
                    "service '\(svc.name)' is reachable in the cluster as '\(name)' (Kubernetes names allow only lowercase letters, digits and '-')",
                    at: SourceLocation(file: pod.compose.path, line: svc.line))
            }
            guard planned.reach == .clusterIP else {
                services.append(headlessService(name: name, component: pod.name))
                continue
            }
            services.append(
                serviceObject(
                    name: name, component: pod.name, ports: planned.listens.map { ($0.name, $0.number, $0.proto) }))
            for np in ports.nodePorts where np.service == svc.name {
                let objectName = np.objectName(id: id)
                if services.contains(where: { $0.name == objectName }) { continue }
                services.append(
                    KubeObject(
                        .service, name: objectName, namespace: namespace, labels: labels(component: pod.name),
                        body: [
                            (
                                "spec",
                                .map([
                                    ("type", .string("NodePort")),
                                    ("selector", .map(serviceSelector(pod.name).map { ($0.0, .string($0.1)) })),
                                    (
                                        "ports",
                                        .list(
                                            np.ports.map { port in
                                                .map([
                                                    ("name", .string(port.name)), ("port", .int(port.number)),
                                                    ("targetPort", .int(port.number)),
                                                    ("protocol", .string(port.proto.kubernetes)),
                                                    ("nodePort", .int(np.nodePort)),
                                                ])
                                            })
                                    ),
                                ])
                            )
                        ]))
            }
            for p in planned.published {
                guard case .unpublished(let h, let why) = p.publication else { continue }
                if why == PortPlan.outsideNodePortRange {
                    warn(
                        "host port \(h) of service '\(svc.name)' is not published (a NodePort must be in 30000–32767)",
                        hint: "use a port in that range in the spec's network.ports, or 'kubectl port-forward'",
                        at: SourceLocation(file: pod.compose.path, line: svc.line))
                } else {
                    warn(
                        "host port \(h) of service '\(svc.name)' is not published: \(why)",
                        hint:
                            "publish a host port in 30000–32767 (a NodePort) in the spec's network.ports, or use 'kubectl port-forward'",
                        at: SourceLocation(file: pod.compose.path, line: svc.line))
                }
            }
            let bound = planned.published.compactMap { p -> String? in
                if case .hostPort(let h) = p.publication { return "\(h)/\(p.port.proto)" }
                return nil
            }
            if !bound.isEmpty {
                warn(
                    "service '\(svc.name)' binds host port \(bound.joined(separator: ", ")) on the kind node (hostPort): "
                        + "its namespace admits privileged pods, as pod security baseline forbids host ports, and its Deployment is replaced, not rolled",
                    hint:
                        "to keep the namespace at baseline, publish a host port in 30000–32767 (a NodePort) in the spec's network.ports",
                    at: SourceLocation(file: pod.compose.path, line: svc.line))
            }
        }
    }

    /// `links: ["db:database"]`: the alias answers too, as a Service like the linked service's under the alias's
    /// name (unless a service of the deployment has that name). A link without an alias needs nothing: every
    /// service is reachable by its own name.
    mutating func renderLinkAliases() {
        for pod in model.pods {
            for svc in pod.compose.services {
                for link in svc.links where NameRules.serviceName(link.alias) != NameRules.serviceName(link.service) {
                    let name = NameRules.serviceName(link.alias)
                    guard !services.contains(where: { $0.name == name }),
                        let target = services.first(where: { $0.name == NameRules.serviceName(link.service) })
                    else { continue }
                    var alias = target
                    alias.name = name
                    services.append(alias)
                }
            }
        }
    }

    /// A Service with no ports (`clusterIP: None`, allowed only headless): its name resolves to the IPs of
    /// the pods it selects, so a service that declares no ports still answers to its compose name.
    func headlessService(name: String, component: String) -> KubeObject {
        KubeObject(
            .service, name: name, namespace: namespace, labels: labels(component: component),
            body: [
                (
                    "spec",
                    .map([
                        ("type", .string("ClusterIP")),
                        ("clusterIP", .string("None")),
                        ("selector", .map(serviceSelector(component).map { ($0.0, .string($0.1)) })),
                    ])
                )
            ])
    }

    func serviceObject(name: String, component: String, ports: [(name: String, port: Int, proto: PortProtocol)])
        -> KubeObject
    {
        KubeObject(
            .service, name: name, namespace: namespace, labels: labels(component: component),
            body: [
                (
                    "spec",
                    .map([
                        ("type", .string("ClusterIP")),
                        ("selector", .map(serviceSelector(component).map { ($0.0, .string($0.1)) })),
                        (
                            "ports",
                            .list(
                                ports.map {
                                    .map([
                                        ("name", .string($0.name)), ("port", .int($0.port)),
                                        ("targetPort", .int($0.port)),
                                        (
                                            "protocol",
                                            .string($0.proto.kubernetes)
                                        ),
                                    ])
                                })
                        ),
                    ])
                )
            ])
    }

    // MARK: Ingress

    mutating func renderIngress() throws {
        guard !spec.httpProxy.isEmpty else { return }
        // laconic-so's per-pod http-proxy Services, which the Ingress routes to.
        for p in ports.proxiedComponents {
            services.append(
                serviceObject(
                    name: proxyServiceName(p.component), component: p.component,
                    ports: p.ports.map { ("port-\($0)", $0, .tcp) }))
        }
        // One Ingress per cert-manager issuer (its annotation is the whole Ingress's): the hosts that take the
        // spec's own setting are in `<id>-ingress`, any host whose issuer differs in one named for it.
        // A host with its own Secret or none is grouped with the others that have no issuer.
        func issuer(_ tls: IngressTLS) -> IngressTLS { tls.annotation == nil ? .none : tls }
        let main = issuer(spec.tls ?? IngressTLS.targetDefault(model.deployTo))
        var groups: [(issuer: IngressTLS, entries: [Int])] = []
        for (entry, h) in spec.httpProxy.enumerated() {
            let own = issuer(spec.tls(for: h))
            if let g = groups.firstIndex(where: { $0.issuer == own }) {
                groups[g].entries.append(entry)
            } else {
                groups.append((own, [entry]))
            }
        }
        for group in groups {
            let name =
                group.issuer == main
                ? "\(id)-ingress" : NameRules.dnsSubdomain("\(id)-ingress-" + group.issuer.ingressSuffix)
            ingresses.append(ingress(name, entries: group.entries, annotation: group.issuer.annotation))
        }
    }

    /// An Ingress of the deployment for the http-proxy entries at `entries`, with their TLS.
    func ingress(_ name: String, entries: [Int], annotation: (String, String)?) -> KubeObject {
        var rules: [YValue] = []
        var tls: [YValue] = []
        for entry in entries {
            let h = spec.httpProxy[entry]
            let paths: [YValue] = ports.routes.filter { $0.entry == entry }.map { r in
                .map([
                    ("path", .string(r.path)), ("pathType", .string("Prefix")),
                    (
                        "backend",
                        .map([
                            (
                                "service",
                                .map([
                                    ("name", .string(proxyServiceName(r.component))),
                                    ("port", .map([("number", .int(r.port))])),
                                ])
                            )
                        ])
                    ),
                ])
            }
            rules.append(.map([("host", .string(h.hostName)), ("http", .map([("paths", .list(paths))]))]))
            let secret: String? =
                switch spec.tls(for: h) {
                case .issuer: NameRules.dnsSubdomain("\(id)-\(h.hostName)-tls")
                case .secret(let name): name
                case .none: nil
                }
            if let secret {
                tls.append(.map([("hosts", .list([.string(h.hostName)])), ("secretName", .string(secret))]))
            }
        }
        var body: [(String, YValue)] = [
            ("ingressClassName", .string(spec.sections.ingressClass ?? options.ingressClass ?? Defaults.ingressClass))
        ]
        if !tls.isEmpty { body.append(("tls", .list(tls))) }
        body.append(("rules", .list(rules)))
        return KubeObject(
            .ingress, name: name, namespace: namespace, labels: labels(),
            annotations: annotation.map { [$0] } ?? [], body: [("spec", .map(body))])
    }

    func proxyServiceName(_ pod: String) -> String {
        multiPod ? "\(id)-\(NameRules.dnsLabel(pod))-service" : "\(id)-service"
    }

    // MARK: External services

    mutating func renderExternalServices() {
        for e in spec.sections.externalServices {
            let name = NameRules.serviceName(e.name)
            let port: YValue = .list([
                .map([
                    ("name", .string("tcp-\(e.port)")), ("port", .int(e.port)), ("targetPort", .int(e.port)),
                    (
                        "protocol",
                        .string("TCP")
                    ),
                ])
            ])
            if let ip = e.ip {
                services.append(
                    KubeObject(
                        .service, name: name, namespace: namespace, labels: labels(),
                        body: [("spec", .map([("type", .string("ClusterIP")), ("ports", port)]))]))
                others.append(
                    KubeObject(
                        .endpointSlice, name: "\(name)-1", namespace: namespace,
                        labels: labels() + [("kubernetes.io/service-name", name)],
                        body: [
                            ("addressType", .string(ip.contains(":") ? "IPv6" : "IPv4")),
                            ("endpoints", .list([.map([("addresses", .list([.string(ip)]))])])),
                            (
                                "ports",
                                .list([
                                    .map([
                                        ("name", .string("tcp-\(e.port)")), ("port", .int(e.port)),
                                        (
                                            "protocol",
                                            .string("TCP")
                                        ),
                                    ])
                                ])
                            ),
                        ]))
            } else {
                let host = e.host ?? "\(e.service ?? e.name).\(e.namespace ?? namespace).svc.cluster.local"
                services.append(
                    KubeObject(
                        .service, name: name, namespace: namespace, labels: labels(),
                        body: [
                            (
                                "spec",
                                .map([
                                    ("type", .string("ExternalName")), ("externalName", .string(host)), ("ports", port),
                                ])
                            )
                        ]))
            }
        }
    }
}
