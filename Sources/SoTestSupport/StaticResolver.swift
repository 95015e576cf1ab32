import Foundation
import SoBasics
import SoSystem

/// Fixed answers for host names; a name the test did not list resolves to nothing.
public struct StaticResolver: HostResolver {
    public let table: [String: [String]]
    public init(_ table: [String: [String]]) { self.table = table }
    public func addresses(of host: String) -> [String] { table[host] ?? [] }
}
