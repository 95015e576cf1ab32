import Foundation
import SoBasics

public struct SpecSecurity: Sendable, Equatable {
    public var privileged = false
    public var capabilities: [String] = []
    public var unlimitedMemlock = false
    public var runtimeClass: String?
    /// Pod Security admission level for the namespace: baseline (default), restricted or privileged.
    public var podSecurity: String?
    /// uid (and gid, fsGroup) pods run as under `restricted` (default 1000).
    public var runAsUser: Int?
    public init() {}
}
