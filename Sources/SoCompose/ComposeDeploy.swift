import Foundation
import SoBasics

public struct ComposeDeploy: Sendable, Equatable {
    public var replicas: Int?
    public var limits: ComposeResources?
    public var reservations: ComposeResources?
    public init(replicas: Int? = nil, limits: ComposeResources? = nil, reservations: ComposeResources? = nil) {
        self.replicas = replicas
        self.limits = limits
        self.reservations = reservations
    }
}
