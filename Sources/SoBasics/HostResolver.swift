import Foundation

/// Host name → IP addresses (for egress allowlists). Sorted, de-duplicated; empty when unresolvable.
public protocol HostResolver: Sendable {
    func addresses(of host: String) -> [String]
}
