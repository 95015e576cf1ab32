import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// What `depends_on` waits for on a plain compose stack: each dependency's first port.
public enum DependencyWait {
    /// The wait's image, unless the spec's `wait-image` names another.
    public static let image = "busybox:1.36"

    /// (dependency, port) pairs a service waits for; dependencies without a port, or that must complete, are skipped.
    static func targets(_ svc: ComposeService, ports: PortPlan) -> [(String, Int)] {
        svc.dependsOn.compactMap { d in
            guard d.condition != "service_completed_successfully", let dep = ports.service(d.service),
                let port = dep.firstPort
            else { return nil }
            return (dep.name, port)
        }
    }
}
