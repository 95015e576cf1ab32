import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// Every port decision of one deployment, worked out once from the model: what each compose service
/// listens on, which pod it runs in (a container-port clash moves it out of its pod), what its Service
/// carries, which host ports become NodePorts, where http-proxy routes go and what kind must map.
/// Services, container ports, NodePorts, `kind-config.yml`, dependency waits, the mapping report and
/// NetworkPolicies all read this value; nothing re-parses port text.
public struct PortPlan: Sendable {
    /// Kubernetes' default NodePort range.
    public static let nodePortRange = 30000...32767
    /// Why a host port outside that range is not published off kind.
    public static let outsideNodePortRange = "outside \(nodePortRange.lowerBound)–\(nodePortRange.upperBound)"

    public struct Port: Sendable, Hashable, CustomStringConvertible {
        public var number: Int
        public var proto: PortProtocol
        public init(_ number: Int, _ proto: PortProtocol = .tcp) {
            self.number = number
            self.proto = proto
        }
        public var description: String { "\(number)/\(proto)" }
        /// The Service port name: `tcp-80`, `udp-53`.
        public var name: String { "\(proto)-\(number)" }
    }

    /// What a compose `ports:` entry's host side becomes.
    public enum Publication: Sendable, Equatable {
        /// No fixed host port: reachable in the cluster only.
        case clusterOnly
        /// A host port in the NodePort range: a NodePort Service with that nodePort (and, on kind, an
        /// extraPortMappings entry from the host).
        case nodePort(Int)
        /// On kind, a host port outside the NodePort range: the container's hostPort on the node, which
        /// kind maps from the host. Pod Security baseline forbids host ports: only with the spec's
        /// `security.pod-security: privileged`.
        case hostPort(Int)
        /// Not published, and why.
        case unpublished(Int, why: String)
    }

    public struct Published: Sendable, Equatable {
        public var port: ComposePort
        public var publication: Publication
    }

    /// How other services reach a compose service by its name, as on compose's network.
    public enum Reach: Sendable, Equatable {
        /// A ClusterIP Service with the ports it listens on.
        case clusterIP
        /// No ports known: a headless Service (`clusterIP: None`), so the name resolves to the pod's IP.
        case headless
        /// No Service: an init container, or a plain compose one-shot service (a Job).
        case none
    }

    /// One compose service of a pod (init containers included, with no Service).
    public struct Service: Sendable {
        public var name: String
        /// The component (Deployment) it runs in: its pod, `<pod>-<service>` when split, the service itself on plain compose.
        public var component: String
        public var file: String
        public var line: Int?
        public var isInitContainer: Bool
        public var networkMode: String?
        /// Moved out of its pod because a container port clashes with an earlier service's; the shared ports.
        public var clashes: [Port]
        /// `ports:` then `expose:`, unique by number and protocol: what its Service carries.
        public var listens: [Port]
        /// `listens` plus the http-proxy ports routed to it: the container's ports.
        public var containerPorts: [Port]
        /// Every `ports:` entry in order, with what its host side becomes.
        public var published: [Published]
        public var reach: Reach
        public var isSplit: Bool { !clashes.isEmpty }
        /// Container ports bound to a host port on the node (`.hostPort` publications), first one per port.
        public var hostPorts: [Port: Int] {
            var out: [Port: Int] = [:]
            for p in published {
                let key = Port(p.port.containerPort, p.port.proto)
                if case .hostPort(let h) = p.publication, out[key] == nil { out[key] = h }
            }
            return out
        }
        /// The port dependency waits knock on.
        public var firstPort: Int? { listens.first?.number }
        /// The port numbers it serves, each once: what `proxy-to`, `maintenance-service` and port-forward may name.
        public var portNumbers: [Int] {
            listens.map(\.number).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        }
        /// The hint for a port it does not serve.
        public var portsHint: String {
            portNumbers.isEmpty
                ? "add the port to the service's ports: or expose:"
                : "its ports: " + portNumbers.map(String.init).joined(separator: ", ")
        }
    }

    /// One NodePort Service: a host port in the NodePort range and every container port it serves (a TCP
    /// and a UDP port share one nodePort, which two Services could not).
    public struct NodePort: Sendable, Equatable {
        public var nodePort: Int
        public var service: String
        public var component: String
        public var ports: [Port]
        /// laconic-so's `<id>-nodeport-<port>-<proto>`; `<id>-nodeport-<port>` when it serves several protocols.
        public func objectName(id: String) -> String {
            ports.count == 1
                ? "\(id)-nodeport-\(ports[0].number)-\(ports[0].proto)" : "\(id)-nodeport-\(ports[0].number)"
        }
    }

    /// One http-proxy route, resolved to its service and component.
    public struct Route: Sendable {
        /// Index of its `network.http-proxy` entry.
        public var entry: Int
        public var host: String
        public var path: String
        public var service: String
        public var port: Int
        public var component: String
    }

    /// Pod services in pod order, then in file order.
    public var services: [Service]
    public var routes: [Route]
    /// NodePort Services, in service order.
    public var nodePorts: [NodePort]
    /// Ports of `network_mode: host` services (pods and jobs): kind maps them to the host.
    public var hostNetworkPorts: [Port]
    /// Where kind maps host ports to the node: host-network ports, NodePorts and hostPorts, each once
    /// (a compose host IP becomes the mapping's listen address).
    public var kindPorts: [KindConfig.PortMapping] = []
    /// Input the renderer refuses (two services publishing one host port, routes to unknown services or ports), in order.
    public var problems: [SoError]

    public init(_ model: DeploymentModel) {
        self.init(
            pods: model.pods, jobs: model.jobs, podPerService: model.podPerService, httpProxy: model.spec.httpProxy,
            specPath: model.spec.path,
            deployTo: model.deployTo, podSecurity: model.spec.sections.security.podSecurity)
    }

    /// Why a fixed host port outside the NodePort range is not a hostPort (nil: it is one).
    static func hostPortRefusal(_ h: Int, deployTo: DeployTarget, podSecurity: String?, hostNetwork: Bool) -> String? {
        if deployTo != .k8sKind { return outsideNodePortRange }
        if hostNetwork { return "the service uses the node's network: it listens on the node's port itself" }
        if h == 80 || h == 443 { return "the ingress controller's on kind; route to it with network.http-proxy" }
        // A hostPort needs a privileged namespace (Pod Security baseline forbids host ports): only where the
        // spec asks for one; otherwise the namespace stays baseline and the port is reported.
        guard podSecurity == "privileged" else {
            return "pod security \(podSecurity ?? "baseline") forbids the hostPort it needs; "
                + "'security: {pod-security: privileged}' in the spec publishes it on kind"
        }
        return nil
    }

    public init(
        pods: [ComposeComponent], jobs: [ComposeComponent] = [], podPerService: Bool, httpProxy: [HTTPProxy],
        specPath: String,
        deployTo: DeployTarget = .k8sKind, podSecurity: String? = nil
    ) {
        services = []
        routes = []
        nodePorts = []
        problems = []
        hostNetworkPorts = []
        for pod in pods {
            if let e = Self.hostPortClash(pod) { problems.append(e) }
            services += Self.podServices(
                pod, podPerService: podPerService, deployTo: deployTo, podSecurity: podSecurity)
        }
        collectNodePorts()
        for c in pods + jobs {
            for svc in c.compose.services where svc.networkMode == "host" {
                for p in svc.ports where !hostNetworkPorts.contains(Port(p.containerPort, p.proto)) {
                    hostNetworkPorts.append(Port(p.containerPort, p.proto))
                }
            }
        }
        resolveRoutes(httpProxy, specPath: specPath)
        guard deployTo == .k8sKind else { return }
        mapKindPorts()
    }

    /// The services of one pod, in file order: a service whose container ports clash with an earlier one's
    /// moves to a component of its own (on a laconic stack; plain compose gives each its own anyway).
    static func podServices(_ pod: ComposeComponent, podPerService: Bool, deployTo: DeployTarget, podSecurity: String?)
        -> [Service]
    {
        var out: [Service] = []
        var taken: Set<Port> = []
        for svc in pod.compose.services {
            let listens = Self.listens(svc)
            var component = podPerService ? svc.name : pod.name
            var clashes: [Port] = []
            if !podPerService {
                if svc.isInitContainer || taken.isDisjoint(with: listens) {
                    taken.formUnion(listens)
                } else {
                    clashes = listens.filter(taken.contains)
                    component = "\(pod.name)-\(svc.name)"
                }
            }
            let published = publications(svc, deployTo: deployTo, podSecurity: podSecurity)
            let reach: Reach =
                svc.isInitContainer || (podPerService && RenderState.isOneShot(svc))
                ? .none : listens.isEmpty ? .headless : .clusterIP
            out.append(
                Service(
                    name: svc.name, component: component, file: pod.compose.path, line: svc.line,
                    isInitContainer: svc.isInitContainer,
                    networkMode: svc.networkMode, clashes: clashes, listens: listens, containerPorts: listens,
                    published: published, reach: reach))
        }
        return out
    }

    /// What each `ports:` entry's host side becomes (a container port keeps the first host port it is bound to).
    static func publications(_ svc: ComposeService, deployTo: DeployTarget, podSecurity: String?) -> [Published] {
        var bound: [Port: Int] = [:]
        return svc.ports.map { p -> Published in
            guard let h = p.hostPort else { return Published(port: p, publication: .clusterOnly) }
            if Self.nodePortRange.contains(h) { return Published(port: p, publication: .nodePort(h)) }
            if let why = Self.hostPortRefusal(
                h, deployTo: deployTo, podSecurity: podSecurity,
                hostNetwork: svc.networkMode == "host")
            {
                return Published(port: p, publication: .unpublished(h, why: why))
            }
            let port = Port(p.containerPort, p.proto)
            if let other = bound[port], other != h {
                return Published(
                    port: p, publication: .unpublished(h, why: "container port \(port) already has host port \(other)"))
            }
            bound[port] = h
            return Published(port: p, publication: .hostPort(h))
        }
    }

    /// One NodePort Service per host port in the NodePort range; two services on one host port are a problem.
    private mutating func collectNodePorts() {
        for svc in services where svc.reach != .none {
            for p in svc.published {
                guard case .nodePort(let h) = p.publication else { continue }
                let port = Port(p.port.containerPort, p.port.proto)
                guard let i = nodePorts.firstIndex(where: { $0.nodePort == h }) else {
                    nodePorts.append(NodePort(nodePort: h, service: svc.name, component: svc.component, ports: [port]))
                    continue
                }
                if nodePorts[i].service != svc.name {
                    let message =
                        "services '\(nodePorts[i].service)' and '\(svc.name)' both publish host port \(h) (one NodePort serves one service)"
                    problems.append(
                        SoError(
                            message,
                            hint: "give one of them another host port in the spec's network.ports",
                            at: SourceLocation(file: svc.file, line: svc.line)))
                } else if nodePorts[i].ports.contains(where: { $0.proto == port.proto && $0 != port }) {
                    problems.append(
                        SoError(
                            "service '\(svc.name)' publishes host port \(h)/\(port.proto) for two container ports",
                            hint: "give one of them another host port in the spec's network.ports",
                            at: SourceLocation(file: svc.file, line: svc.line)))
                } else if !nodePorts[i].ports.contains(port) {
                    nodePorts[i].ports.append(port)
                }
            }
        }
    }

    /// http-proxy routes to the services and ports they name (the port added to the container's ports).
    private mutating func resolveRoutes(_ httpProxy: [HTTPProxy], specPath: String) {
        for (entry, h) in httpProxy.enumerated() {
            for r in h.routes {
                guard let i = services.firstIndex(where: { $0.name == r.service }) else {
                    problems.append(
                        SoError(
                            "http-proxy route \(r.path) → \(r.proxyTo): no service '\(r.service)' in the stack",
                            hint: "proxy-to names a compose service and its port", at: SourceLocation(file: specPath)))
                    continue
                }
                guard services[i].portNumbers.contains(r.port) else {
                    problems.append(
                        SoError(
                            "http-proxy route \(r.path) → \(r.proxyTo): service '\(r.service)' has no port \(r.port)",
                            hint: services[i].portsHint, at: SourceLocation(file: specPath)))
                    continue
                }
                if !services[i].containerPorts.contains(Port(r.port)) {
                    services[i].containerPorts.append(Port(r.port))
                }
                routes.append(
                    Route(
                        entry: entry, host: h.hostName, path: r.path, service: r.service, port: r.port,
                        component: services[i].component))
            }
        }
    }

    /// On kind: host-network ports, then NodePorts and hostPorts, each host port once.
    private mutating func mapKindPorts() {
        func map(_ port: Int, _ proto: PortProtocol, _ ip: String?) {
            let m = KindConfig.PortMapping(
                port: port, proto: proto, listenAddress: ip.flatMap { $0 == "0.0.0.0" || $0 == "::" ? nil : $0 })
            if !kindPorts.contains(where: { $0.port == m.port && $0.proto == m.proto }) { kindPorts.append(m) }
        }
        for p in hostNetworkPorts { map(p.number, p.proto, nil) }
        for svc in services where svc.reach != .none {
            for p in svc.published {
                switch p.publication {
                case .nodePort(let h), .hostPort(let h): map(h, p.port.proto, p.port.hostIP)
                case .clusterOnly, .unpublished: continue
                }
            }
        }
    }

    /// Two services of one pod publishing one host port cannot both run.
    static func hostPortClash(_ pod: ComposeComponent) -> SoError? {
        var hostOwner: [String: String] = [:]
        for svc in pod.compose.services {
            for p in svc.ports {
                guard let h = p.hostPort else { continue }
                let key = "\(p.hostIP ?? "")\(h)/\(p.proto)"
                if let other = hostOwner[key], other != svc.name {
                    return SoError(
                        "services '\(other)' and '\(svc.name)' both publish host port \(h)/\(p.proto)",
                        hint: "give one of them another host port in the spec's network.ports",
                        at: SourceLocation(file: pod.compose.path, line: svc.line))
                }
                hostOwner[key] = svc.name
            }
        }
        return nil
    }

    public func service(_ name: String) -> Service? { services.first { $0.name == name } }

    /// `ports:` then `expose:`, unique by number and protocol (also for Job containers, which the plan does not hold).
    public static func listens(_ svc: ComposeService) -> [Port] {
        var out: [Port] = []
        for p in svc.ports + svc.expose where !out.contains(Port(p.containerPort, p.proto)) {
            out.append(Port(p.containerPort, p.proto))
        }
        return out
    }

    /// Ports the spec's http-proxy routes send to `service`, in route order.
    public func proxiedPorts(_ service: String) -> [Int] {
        routes.filter { $0.service == service }.map(\.port).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// Components with http-proxy routes and the ports routed to each: laconic-so's `<id>-service` Services.
    public var proxiedComponents: [(component: String, ports: [Int])] {
        var out: [(component: String, ports: [Int])] = []
        for r in routes {
            if let i = out.firstIndex(where: { $0.component == r.component }) {
                if !out[i].ports.contains(r.port) { out[i].ports.append(r.port) }
            } else {
                out.append((r.component, [r.port]))
            }
        }
        return out
    }
}
