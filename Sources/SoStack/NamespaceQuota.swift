import Foundation
import SoBasics

/// `quota:` — a ResourceQuota for the namespace and a LimitRange with container defaults.
public struct NamespaceQuota: Sendable, Equatable {
    public var cpu: String?
    public var memory: String?
    public var storage: String?
    public var pods: Int?
    public init() {}
}
