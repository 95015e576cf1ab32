import SoBasics
import SoCompose
import SoKube
import SoStack

/// The egress proxy (spec `egress-proxy:`): what its container is told, and what the others are.
struct EgressProxy {
    static let defaultPort = 3128
    var service: String
    var component: String
    var port: Int
    /// Hosts and CIDRs it lets through, on `ports`.
    var allow: [String]
    var ports: [Int]
    /// The spec file its refusals name.
    var spec: String
    /// Every service of the deployment: reached directly, never through the proxy.
    var others: [String]

    /// The proxy's own settings (config/agent-workspace/egress-proxy.py reads them).
    var settings: [(String, String)] {
        [
            ("SO_EGRESS_ALLOW", allow.joined(separator: ",")),
            ("SO_EGRESS_PORTS", ports.map(String.init).joined(separator: ",")),
            ("SO_EGRESS_SPEC", spec), ("SO_EGRESS_LISTEN", String(port)),
        ]
    }

    /// What every other container gets: the proxy for HTTP(S), the deployment's own services and the cluster's
    /// names directly.
    var clientSettings: [(String, String)] {
        let url = "http://\(service):\(port)"
        let direct = (["localhost", "127.0.0.1", "::1", ".svc", ".cluster.local"] + others).joined(separator: ",")
        return [
            ("HTTP_PROXY", url), ("HTTPS_PROXY", url), ("http_proxy", url), ("https_proxy", url), ("NO_PROXY", direct),
            ("no_proxy", direct),
        ]
    }
}
