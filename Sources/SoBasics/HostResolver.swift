import Foundation

/// Host name → IP addresses (for egress allowlists). Sorted, de-duplicated; empty when unresolvable.
public protocol HostResolver: Sendable {
    func addresses(of host: String) -> [String]
    /// Every one of `hosts`' addresses; a resolver that can asks for them at once.
    func addresses(of hosts: [String]) -> [String: [String]]
}

extension HostResolver {
    public func addresses(of hosts: [String]) -> [String: [String]] {
        Dictionary(hosts.map { ($0, addresses(of: $0)) }, uniquingKeysWith: { first, _ in first })
    }
}
