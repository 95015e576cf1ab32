import Foundation
import SoBasics
import SoCompose

/// One compose file of a deployment (a pod, or a job), interpolated with the deployment's config.
public struct ComposeComponent: Sendable {
    public var name: String
    public var compose: ComposeFile
    /// Path of the compose file relative to the deployment directory (`compose/docker-compose-x.yml`).
    public var relativePath: String
    public init(name: String, compose: ComposeFile, relativePath: String) {
        self.name = name
        self.compose = compose
        self.relativePath = relativePath
    }
}

extension ComposeComponent {
    /// Compose profiles: a service with profiles runs only when one of them is selected (the spec's `profiles:`).
    /// The component without the others, and the services left out.
    public func selecting(profiles: [String]) -> (component: ComposeComponent, skipped: [ComposeService]) {
        var c = self
        let skipped = c.compose.services.filter { !$0.profiles.isEmpty && Set($0.profiles).isDisjoint(with: profiles) }
        c.compose.services.removeAll { !$0.profiles.isEmpty && Set($0.profiles).isDisjoint(with: profiles) }
        return (c, skipped)
    }
}
