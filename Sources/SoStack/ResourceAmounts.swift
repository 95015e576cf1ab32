import Foundation
import SoBasics

/// CPU and memory for one container (compose `deploy.resources` shape: cpus, memory).
public struct ResourceAmounts: Sendable, Equatable {
    public var cpus: String?
    public var memory: String?
    public init(cpus: String? = nil, memory: String? = nil) {
        self.cpus = cpus
        self.memory = memory
    }
}
