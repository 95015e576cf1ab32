import SoBasics
import SoCompose
import SoKube
import SoStack

/// Where a cluster's DNS answers, from what the cluster reports: the `kube-dns` Service's endpoints (CoreDNS
/// pods on kind; a server on the node's address on the kit or behind NodeLocal DNSCache) and the NodeLocal
/// DNSCache address. NetworkPolicies see addresses after kube-proxy's DNAT, never the Service's IP, so
/// each is allowed as what it is: pods by the Service's selector, anything else by its address alone.
public struct ClusterDNS: Sendable, Equatable {
    /// The `kube-dns` Service's selector, when its endpoints are pods (in kube-system).
    public var podSelector: [String: String]?
    /// Addresses that are no pod's (host network, NodeLocal DNSCache's link-local address, the Service IP
    /// NodeLocal DNSCache answers on): each a /32 or /128.
    public var addresses: [String]

    public init(podSelector: [String: String]?, addresses: [String]) {
        self.podSelector = podSelector
        self.addresses = addresses
    }

    /// The `to:` peers of the DNS policy; nil when the cluster reported nothing usable.
    var peers: [YValue]? {
        var out: [YValue] = []
        if let podSelector, !podSelector.isEmpty {
            let labels: YValue = .map(podSelector.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
            out.append(
                .map([
                    ("namespaceSelector", namespaceLabels("kube-system")),
                    ("podSelector", .map([("matchLabels", labels)])),
                ]))
        }
        for a in addresses.sorted() {
            out.append(.map([("ipBlock", .map([("cidr", .string(a.contains(":") ? "\(a)/128" : "\(a)/32"))]))]))
        }
        return out.isEmpty ? nil : out
    }
}
