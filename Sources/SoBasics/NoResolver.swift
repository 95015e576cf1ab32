import Foundation

/// Resolves nothing: rendering without network access.
public struct NoResolver: HostResolver {
    public init() {}
    public func addresses(of host: String) -> [String] { [] }
}
