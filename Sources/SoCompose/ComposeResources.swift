import Foundation
import SoBasics

public struct ComposeResources: Sendable, Equatable {
    public var cpus: String?
    public var memory: String?
    public init(cpus: String? = nil, memory: String? = nil) {
        self.cpus = cpus
        self.memory = memory
    }
}
