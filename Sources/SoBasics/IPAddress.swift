import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// IP address literals as the Kubernetes API server accepts them (e.g. in `hostAliases[].ip`).
public enum IPAddress {
    /// An IPv4 dotted quad (`172.18.0.1`) or an IPv6 address (`fc00::1`, `::ffff:10.0.0.1`); no CIDR, no zone.
    public static func isValid(_ text: String) -> Bool { isIPv4(text) || isIPv6(text) }

    public static func isIPv4(_ text: String) -> Bool {
        var addr = in_addr()
        return !text.isEmpty && text.count <= 15 && inet_pton(AF_INET, text, &addr) == 1
    }

    public static func isIPv6(_ text: String) -> Bool {
        var addr = in6_addr()
        return text.contains(":") && inet_pton(AF_INET6, text, &addr) == 1
    }
}
