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

    /// The address's bytes (4 for IPv4, 16 for IPv6; an IPv4-mapped IPv6 address as its 4), or nil.
    public static func bytes(_ text: String) -> [UInt8]? {
        if isIPv4(text) {
            var addr = in_addr()
            guard inet_pton(AF_INET, text, &addr) == 1 else { return nil }
            return withUnsafeBytes(of: &addr) { Array($0) }
        }
        var addr6 = in6_addr()
        guard text.contains(":"), inet_pton(AF_INET6, text, &addr6) == 1 else { return nil }
        let b = withUnsafeBytes(of: &addr6) { Array($0) }
        return b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF ? Array(b[12...]) : b
    }

    /// A loopback address (127.0.0.0/8, ::1).
    public static func isLoopback(_ text: String) -> Bool {
        guard let b = bytes(text) else { return false }
        return b.count == 4 ? b[0] == 127 : b == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// `10.0.0.0/8`, `fd00::/8`: an address, a slash and a prefix length that fits it.
    public static func isCIDR(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let net = bytes(String(parts[0])), let bits = Int(parts[1]) else { return false }
        return bits >= 0 && bits <= net.count * 8
    }

    /// Whether `address` lies in `cidr` (`10.0.0.0/8`, `fd00::/8`); false when either is malformed.
    public static func cidr(_ cidr: String, contains address: String) -> Bool {
        let parts = cidr.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let net = bytes(String(parts[0])), let bits = Int(parts[1]), let ip = bytes(address),
            net.count == ip.count, bits >= 0, bits <= net.count * 8
        else { return false }
        for i in 0..<net.count {
            let take = min(8, max(0, bits - i * 8))
            let mask: UInt8 = take == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if net[i] & mask != ip[i] & mask { return false }
        }
        return true
    }
}
