import Foundation
import SoBasics

public struct ContainerResources: Sendable, Equatable {
    public var reservations: ResourceAmounts?
    public var limits: ResourceAmounts?
    public init(reservations: ResourceAmounts? = nil, limits: ResourceAmounts? = nil) {
        self.reservations = reservations
        self.limits = limits
    }
}
