import SoBasics
import SoCompose
import SoKube
import SoStack

/// Compose networks on a plain compose stack (one Deployment per service): a service is reachable only
/// from services that share one of its networks, as with docker compose. Services without `networks:`
/// are on `default`. Nothing is generated when every service is on the default network.
enum ComposeNetworks {
    static func networks(of svc: ComposeService) -> [String] { svc.networks.isEmpty ? ["default"] : svc.networks }

    /// For each service, the services allowed to reach it; nil when no service names a network.
    static func peers(_ services: [ComposeService]) -> [(service: ComposeService, peers: [String])]? {
        guard services.contains(where: { !$0.networks.isEmpty && $0.networks != ["default"] }) else { return nil }
        return services.map { s in
            let mine = Set(networks(of: s))
            return (s, services.filter { $0.name != s.name && !mine.isDisjoint(with: networks(of: $0)) }.map(\.name))
        }
    }
}
