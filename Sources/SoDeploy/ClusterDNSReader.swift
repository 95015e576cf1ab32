import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender

/// Reads where the cluster's DNS answers, for the DNS NetworkPolicy of a spec with `egress:` (ClusterDNS):
/// the `kube-dns` Service and its EndpointSlices in kube-system, and NodeLocal DNSCache's DaemonSet when
/// there is one — three requests at once. A user who may not read kube-system gets nil: the policy then
/// allows port 53 to kube-system's pods, as a render without a cluster does.
struct ClusterDNSReader {
    let client: ClusterClient

    static let namespace = "kube-system"
    static let service = "kube-dns"
    /// NodeLocal DNSCache's DaemonSet (kubernetes/kubernetes cluster/addons/dns/nodelocaldns) and its
    /// default link-local address.
    static let nodeLocal = "node-local-dns"
    static let nodeLocalDefault = "169.254.20.10"

    func read() async -> ClusterDNS? {
        async let svc = client.get(.service, name: Self.service, namespace: Self.namespace)
        async let slices = client.list(
            .endpointSlice, namespace: Self.namespace, labelSelector: "kubernetes.io/service-name=\(Self.service)")
        async let nodeLocal = client.get(.daemonSet, name: Self.nodeLocal, namespace: Self.namespace)
        // A read refused (no access to kube-system) means nil: the policy then allows port 53 to kube-system (above).
        guard let service = try? await svc ?? nil, let listed = try? await slices else {
            _ = try? await nodeLocal  // awaited only so the task ends before we return; its answer no longer matters
            return nil
        }
        // Most clusters run no NodeLocal DNSCache: an unreadable DaemonSet counts as none.
        return Self.derive(service: service, slices: listed, nodeLocal: (try? await nodeLocal) ?? nil)
    }

    /// Pure: what the policy allows, from what the cluster reported.
    static func derive(service: JSON, slices: [JSON], nodeLocal: JSON?) -> ClusterDNS? {
        var podEndpoints = false
        var addresses: [String] = []
        for slice in slices {
            for e in slice["endpoints"]?.array ?? [] {
                if e.at("targetRef", "kind")?.string == "Pod" {
                    podEndpoints = true
                    continue
                }
                for a in e["addresses"]?.array ?? [] {
                    if let a = a.string, IPAddress.isValid(a), !addresses.contains(a) { addresses.append(a) }
                }
            }
        }
        var selector: [String: String]?
        if podEndpoints, case .object(let labels)? = service.at("spec", "selector") {
            selector = labels.compactMapValues(\.string)
        }
        if let ds = nodeLocal {
            // It answers on its link-local address and, in iptables mode, on the Service's own IP.
            var local = nodeLocalDefault
            for c in ds.at("spec", "template", "spec", "containers")?.array ?? [] {
                let args = (c["args"]?.array ?? []).compactMap(\.string)
                if let i = args.firstIndex(of: "-localip"), i + 1 < args.count { local = args[i + 1] }
                if let a = args.first(where: { $0.hasPrefix("-localip=") }) {
                    local = String(a.dropFirst("-localip=".count))
                }
            }
            for a in local.split(separator: ",").map(String.init) + [service.at("spec", "clusterIP")?.string ?? ""]
            where IPAddress.isValid(a) && !addresses.contains(a) { addresses.append(a) }
        }
        if selector == nil && podEndpoints { return nil }
        let dns = ClusterDNS(podSelector: selector, addresses: addresses)
        return selector == nil && addresses.isEmpty ? nil : dns
    }
}
