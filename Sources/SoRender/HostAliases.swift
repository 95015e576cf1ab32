import Foundation
import SoBasics
import SoCompose

/// compose `extra_hosts` → pod `hostAliases`. Literal IP addresses are kept. `host-gateway` (docker's
/// name for the host as containers see it) becomes the address render is given: the spec's
/// `host-gateway:`, else what start found (on kind, the gateway of kind's docker network). Without one,
/// and for any value that is not an IP address, the entry is left out: the API server refuses a
/// hostAlias whose ip is not an address.
public enum HostAliases {
    public static let gatewayKeyword = "host-gateway"

    public struct Resolved: Sendable, Equatable {
        /// `hostAliases`, grouped by address in the order first written.
        public var aliases: [Alias] = []
        /// Entries left out, as written, each with the reason.
        public var leftOut: [(entry: String, reason: String)] = []
        /// Host names that were given the gateway's address.
        public var viaGateway: [String] = []

        public static func == (a: Resolved, b: Resolved) -> Bool {
            a.aliases == b.aliases && a.viaGateway == b.viaGateway
                && a.leftOut.map(\.entry) == b.leftOut.map(\.entry)
                && a.leftOut.map(\.reason) == b.leftOut.map(\.reason)
        }
    }

    public struct Alias: Sendable, Equatable {
        public var ip: String
        public var hostnames: [String]
    }

    /// The address `host-gateway` stands for: the spec's key wins over what start found.
    public static func gateway(spec: String?, found: String?) -> String? { spec ?? found }

    /// Whether any of these services writes `NAME:host-gateway`.
    public static func usesGateway(_ services: [ComposeService]) -> Bool {
        services.contains { $0.extraHosts.contains { split($0)?.value == gatewayKeyword } }
    }

    /// `host:ip`, `host=ip`, `host:[::1]` → (host, ip); nil when there is no separator.
    static func split(_ entry: String) -> (host: String, value: String)? {
        guard let i = entry.firstIndex(where: { $0 == ":" || $0 == "=" }) else { return nil }
        let value = String(entry[entry.index(after: i)...]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (String(entry[..<i]), value)
    }

    public static func resolve(_ entries: [String], gateway: String?) -> Resolved {
        var out = Resolved()
        for entry in entries {
            guard let (host, value) = split(entry), !host.isEmpty else {
                out.leftOut.append((entry, "not NAME:ADDRESS"))
                continue
            }
            let ip: String
            if value == gatewayKeyword {
                guard let gateway else {
                    out.leftOut.append((entry, "no address for host-gateway here"))
                    continue
                }
                ip = gateway
                if !out.viaGateway.contains(host) { out.viaGateway.append(host) }
            } else {
                guard IPAddress.isValid(value) else {
                    out.leftOut.append((entry, "'\(value)' is not an IP address"))
                    continue
                }
                ip = value
            }
            if let i = out.aliases.firstIndex(where: { $0.ip == ip }) {
                if !out.aliases[i].hostnames.contains(host) { out.aliases[i].hostnames.append(host) }
            } else {
                out.aliases.append(Alias(ip: ip, hostnames: [host]))
            }
        }
        return out
    }

    /// The warning for an entry left out, at the service's `extra_hosts:` line.
    static func warning(_ entry: String, reason: String, service: ComposeService, file: String) -> Diagnostic {
        let line = service.keys.first { $0.key == "extra_hosts" }?.line ?? service.line
        let hint =
            reason.hasPrefix("no address")
            ? "set 'host-gateway: IP' in the spec to the address at which pods reach the host; start on kind finds it from kind's docker network"
            : "write NAME:IP with an IPv4 or IPv6 address, or NAME:host-gateway"
        return Diagnostic(
            "extra_hosts '\(entry)' of service '\(service.name)' is left out: \(reason)", hint: hint,
            at: SourceLocation(file: file, line: line))
    }
}
