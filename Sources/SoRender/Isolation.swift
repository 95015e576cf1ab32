import SoBasics
import SoCompose
import SoKube
import SoStack

/// Namespace guard rails: NetworkPolicies (spec `egress:`) and ResourceQuota/LimitRange (spec `quota:`).
/// Host names in `egress:` arrive already resolved (RenderOptions.egressAddresses); rendering stays pure.
extension RenderState {
    mutating func renderIsolation() throws {
        renderComposeNetworks()
        if let egress = spec.sections.egress { try renderNetworkPolicies(egress) }
        if let quota = spec.sections.quota { try renderQuota(quota) }
    }

    var configValues: [String: String] { Dictionary(model.config.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }) }

    mutating func renderNetworkPolicies(_ egress: EgressPolicy) throws {
        policies.append(defaultDenyPolicy())
        policies.append(sameNamespacePolicy())
        policies.append(dnsPolicy())
        if !spec.httpProxy.isEmpty { policies.append(fromIngressPolicy()) }
        let (hosts, cidrs) = egress.targets(config: configValues)
        warnUnresolved(hosts)
        let blocks = egressBlocks(hosts: hosts, cidrs: cidrs)
        if !blocks.isEmpty { policies.append(egressAllowlistPolicy(egress, blocks: blocks)) }
        if let proxy { policies.append(egressProxyPolicy(proxy)) }
    }

    /// A NetworkPolicy of the deployment, named `<id>-<suffix>`, with `spec` as its spec.
    func networkPolicy(_ suffix: String, _ spec: [(String, YValue)]) -> KubeObject {
        KubeObject(
            .networkPolicy, name: NameRules.dnsSubdomain("\(id)-\(suffix)"), namespace: namespace,
            labels: labels(), body: [("spec", .map(spec))])
    }

    /// The policy that lets nothing in or out, except what the other policies allow.
    func defaultDenyPolicy() -> KubeObject {
        networkPolicy(
            "default-deny",
            [("podSelector", .map([])), ("policyTypes", .list([.string("Ingress"), .string("Egress")]))])
    }

    /// The policy that lets pods of this deployment reach each other (compose's default network).
    func sameNamespacePolicy() -> KubeObject {
        let all: YValue = .map([])
        return networkPolicy(
            "same-namespace",
            [
                ("podSelector", all),
                ("ingress", .list([.map([("from", .list([.map([("podSelector", all)])]))])])),
                ("egress", .list([.map([("to", .list([.map([("podSelector", all)])]))])])),
                ("policyTypes", .list([.string("Ingress"), .string("Egress")])),
            ])
    }

    /// The policy that lets every pod ask the cluster's DNS (UDP and TCP port 53).
    func dnsPolicy() -> KubeObject {
        let s = YValue.string
        let dnsPorts: YValue = .list(["UDP", "TCP"].map { .map([("protocol", s($0)), ("port", .int(53))]) })
        return networkPolicy(
            "dns",
            [
                ("podSelector", .map([])),
                (
                    "egress",
                    .list([
                        .map([
                            ("to", .list(options.clusterDNS?.peers ?? [namespaceSelector("kube-system")])),
                            ("ports", dnsPorts),
                        ])
                    ])
                ),
                ("policyTypes", .list([s("Egress")])),
            ])
    }

    /// The policy that lets the ingress controller's namespace reach every pod (for `http-proxy:` routes).
    func fromIngressPolicy() -> KubeObject {
        networkPolicy(
            "from-ingress",
            [
                ("podSelector", .map([])),
                ("ingress", .list([.map([("from", .list([namespaceSelector(IngressController.namespace)]))])])),
                ("policyTypes", .list([.string("Ingress")])),
            ])
    }

    /// Warns of the `egress:` hosts that resolved to no address.
    mutating func warnUnresolved(_ hosts: [String]) {
        let unresolved = hosts.filter { (options.egressAddresses[$0] ?? []).isEmpty }
        guard !unresolved.isEmpty else { return }
        let (plural, pronoun) = unresolved.count == 1 ? ("", "it") : ("s", "them")
        warn(
            "egress host\(plural) \(unresolved.joined(separator: ", ")) did not resolve; pods cannot reach \(pronoun)",
            hint: "check the names and this machine's DNS, or list CIDRs under egress:",
            at: SourceLocation(file: spec.path))
    }

    /// The CIDRs egress may reach: the spec's own, then each host's addresses (one /32 or /128 each), no repeats.
    func egressBlocks(hosts: [String], cidrs: [String]) -> [String] {
        var blocks = cidrs
        for h in hosts {
            for a in options.egressAddresses[h] ?? [] {
                let c = a.contains(":") ? "\(a)/128" : "\(a)/32"
                if !blocks.contains(c) { blocks.append(c) }
            }
        }
        return blocks
    }

    /// An egress rule: TCP to the CIDRs `to` on `ports`.
    func egressRule(_ to: [String], _ ports: [Int]) -> YValue {
        .map([
            ("to", .list(to.map { .map([("ipBlock", .map([("cidr", .string($0))]))]) })),
            ("ports", .list(ports.map { .map([("protocol", .string("TCP")), ("port", .int($0))]) })),
        ])
    }

    /// The policy that lets every pod reach `blocks` on the allowed ports, and each URL's host on that URL's port.
    func egressAllowlistPolicy(_ egress: EgressPolicy, blocks: [String]) -> KubeObject {
        var rules = [egressRule(blocks, egress.ports)]
        // A URL's own port (git://host/… is 9418, https://host:8443/… is 8443) for that URL's host only.
        for (target, ports) in egress.urlPorts(config: configValues).sorted(by: { $0.key < $1.key }) {
            let to =
                SpecSections.isCIDR(target)
                ? [target]
                : (options.egressAddresses[target] ?? []).map { $0.contains(":") ? "\($0)/128" : "\($0)/32" }
            if !to.isEmpty { rules.append(egressRule(to, ports)) }
        }
        return networkPolicy(
            "egress-allowlist",
            [
                ("podSelector", .map([])),
                ("egress", .list(rules)),
                ("policyTypes", .list([.string("Egress")])),
            ])
    }

    /// The policy of the egress proxy's pod, selected by its component.
    func egressProxyPolicy(_ proxy: EgressProxy) -> KubeObject {
        // The proxy checks names; its pod alone may reach any address, on the allowed ports.
        let s = YValue.string
        let anywhere: [YValue] = ["0.0.0.0/0", "::/0"].map { .map([("ipBlock", .map([("cidr", s($0))]))]) }
        let selector: YValue = .map([
            ("matchLabels", .map(serviceSelector(proxy.component).map { ($0.0, s($0.1)) }))
        ])
        return networkPolicy(
            "egress-proxy",
            [
                ("podSelector", selector),
                (
                    "egress",
                    .list([
                        .map([
                            ("to", .list(anywhere)),
                            ("ports", .list(proxy.ports.map { .map([("protocol", s("TCP")), ("port", .int($0))]) })),
                        ])
                    ])
                ),
                ("policyTypes", .list([s("Egress")])),
            ])
    }

    /// The spec's `egress-proxy:` as render needs it; nil without one. The service must run in a pod of its own
    /// (a NetworkPolicy selects pods, not containers).
    func egressProxy() throws -> EgressProxy? {
        guard let egress = spec.sections.egress, let name = egress.proxy else { return nil }
        let at = SourceLocation(file: spec.path)
        guard let svc = ports.service(name), !svc.isInitContainer else {
            throw SoError(
                "egress-proxy names service '\(name)', which no pod of the deployment runs",
                hint: "name a compose service of the stack", at: at)
        }
        let neighbours = ports.services.filter {
            $0.component == svc.component && $0.name != name && !$0.isInitContainer
        }.map(\.name)
        if !neighbours.isEmpty {
            throw SoError(
                "egress-proxy service '\(name)' shares its pod with \(neighbours.joined(separator: ", ")), which would get its wide egress",
                hint: "put the proxy in a compose file (pod) of its own", at: at)
        }
        let (hosts, cidrs) = egress.targets(config: configValues)
        var allowedPorts = egress.ports
        for p in egress.urlPorts(config: configValues).values.joined() where !allowedPorts.contains(p) {
            allowedPorts.append(p)
        }
        return EgressProxy(
            service: name, component: svc.component, port: svc.listens.first?.number ?? EgressProxy.defaultPort,
            allow: hosts + cidrs, ports: allowedPorts, spec: Path.join(model.directory, "spec.yml"),
            others: ports.services.filter { !$0.isInitContainer }.map(\.name))
    }

    mutating func renderQuota(_ quota: NamespaceQuota) throws {
        var hard: [(String, YValue)] = []
        func amount(_ value: String?, _ key: String, cpu: Bool = false) throws {
            guard let value else { return }
            guard let q = cpu ? Quantity.cpu(value) : Quantity.bytes(value, binaryLetters: true) else {
                let name = key.split(separator: ".").last.map(String.init) ?? key
                throw SoError(
                    "quota \(name) '\(value)' is not a \(cpu ? "CPU amount" : "size")",
                    hint: cpu ? "write e.g. 2 or 1500m" : "write e.g. 4Gi or 512Mi", at: SourceLocation(file: spec.path)
                )
            }
            hard.append((key, .string(q)))
        }
        try amount(quota.cpu, "limits.cpu", cpu: true)
        try amount(quota.memory, "limits.memory")
        try amount(quota.storage, "requests.storage")
        if let p = quota.pods { hard.append(("pods", .string(String(p)))) }
        if !hard.isEmpty {
            policies.append(
                KubeObject(
                    .resourceQuota, name: NameRules.dnsSubdomain("\(id)-quota"), namespace: namespace, labels: labels(),
                    body: [("spec", .map([("hard", .map(hard))]))]))
        }
        let defaults: YValue = .map([("cpu", .string(Defaults.cpuLimit)), ("memory", .string(Defaults.memoryLimit))])
        let requests: YValue = .map([
            ("cpu", .string(Defaults.cpuRequest)), ("memory", .string(Defaults.memoryRequest)),
        ])
        let limit: YValue = .map([("type", .string("Container")), ("default", defaults), ("defaultRequest", requests)])
        policies.append(
            KubeObject(
                .limitRange, name: NameRules.dnsSubdomain("\(id)-limits"), namespace: namespace, labels: labels(),
                body: [("spec", .map([("limits", .list([limit]))]))]))
    }
}

extension RenderState {
    mutating func renderComposeNetworks() {
        guard model.podPerService else { return }
        let services = model.pods.flatMap(\.compose.services)
        guard let all = ComposeNetworks.peers(services) else { return }
        for (svc, peers) in all {
            var from: [YValue] = []
            if !peers.isEmpty {
                from.append(
                    .map([
                        (
                            "podSelector",
                            .map([
                                (
                                    "matchExpressions",
                                    .list([
                                        .map([
                                            ("key", .string(DeploymentNames.Label.component)),
                                            ("operator", .string("In")),
                                            ("values", .list(peers.map { .string(NameRules.labelValue($0)) })),
                                        ])
                                    ])
                                )
                            ])
                        )
                    ]))
            }
            var rules: [YValue] = []
            if !from.isEmpty { rules.append(.map([("from", .list(from))])) }
            // Published ports (NodePorts) and the ingress controller still reach the service.
            let published = (ports.service(svc.name)?.published ?? []).filter {
                switch $0.publication {
                case .nodePort, .hostPort: return true
                default: return false
                }
            }.map(\.port)
            if !published.isEmpty {
                rules.append(
                    .map([
                        (
                            "ports",
                            .list(
                                published.map {
                                    .map([("protocol", .string($0.proto.kubernetes)), ("port", .int($0.containerPort))])
                                })
                        )
                    ]))
            }
            if !spec.httpProxy.isEmpty {
                rules.append(.map([("from", .list([namespaceSelector(IngressController.namespace)]))]))
            }
            let selector: YValue = .map([("matchLabels", .map(serviceSelector(svc.name).map { ($0.0, .string($0.1)) }))]
            )
            policies.append(
                KubeObject(
                    .networkPolicy,
                    name: NameRules.dnsSubdomain("\(id)-net-\(NameRules.dnsLabel(svc.name))"),
                    namespace: namespace, labels: labels(component: svc.name),
                    body: [
                        (
                            "spec",
                            .map([
                                ("podSelector", selector), ("ingress", .list(rules)),
                                ("policyTypes", .list([.string("Ingress")])),
                            ])
                        )
                    ]))
        }
        if spec.sections.egress != nil {
            warn(
                "the spec's egress: lets every pod of the deployment reach every other, which undoes the separation of compose networks",
                hint: "drop egress:, or put the services on one network", at: SourceLocation(file: spec.path))
        }
    }
}

/// A NetworkPolicy peer: every pod of the namespace `name`.
private func namespaceSelector(_ name: String) -> YValue { .map([("namespaceSelector", namespaceLabels(name))]) }
/// The label selector of the namespace `name`.
func namespaceLabels(_ name: String) -> YValue {
    .map([("matchLabels", .map([("kubernetes.io/metadata.name", .string(name))]))])
}
