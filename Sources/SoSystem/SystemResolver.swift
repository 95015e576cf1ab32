import Foundation
import SoBasics
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The system resolver (getaddrinfo), IPv4 and IPv6; a name's answer is kept for 30 s, and many names are asked
/// for at once (`RememberedLookups`).
public struct SystemResolver: HostResolver {
    let lookups = RememberedLookups(lookUp: SystemResolver.lookUp)
    public init() {}
    public func addresses(of host: String) -> [String] { lookups.addresses(of: host) }
    public func addresses(of hosts: [String]) -> [String: [String]] { lookups.addresses(of: hosts) }

    static func lookUp(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
        defer { freeaddrinfo(first) }
        var out: Set<String> = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                ai.pointee.ai_addr, ai.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
                == 0
            {
                out.insert(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            p = ai.pointee.ai_next
        }
        return out.sorted()
    }
}
