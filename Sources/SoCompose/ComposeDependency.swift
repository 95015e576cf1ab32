import Foundation
import SoBasics

public struct ComposeDependency: Sendable, Equatable {
    public var service: String
    /// service_started (default) | service_healthy | service_completed_successfully
    public var condition: String
    /// `required: false`: the service starts even when this one is missing or failed.
    public var required: Bool
    /// `restart: true`: restart the dependent service when this one is updated.
    public var restart: Bool
    public init(service: String, condition: String = "service_started", required: Bool = true, restart: Bool = false) {
        self.service = service
        self.condition = condition
        self.required = required
        self.restart = restart
    }
}
