import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

/// How services reach each other: dependency waits on plain compose stacks, and laconic-so's
/// same-pod `localhost` rewrite.
extension PodBuilder {
    /// Plain compose: `depends_on` as init containers that wait until each dependency's Service answers
    /// on its first port (start order, as compose gives it).
    func waitForDependencies() -> [YValue] {
        guard model.podPerService else { return [] }
        var out: [YValue] = []
        for svc in compose.services {
            for (dep, port) in DependencyWait.targets(svc, ports: state.ports) {
                let script =
                    "until nc -z -w 2 \(NameRules.serviceName(dep)) \(port); do echo 'waiting for \(dep):\(port)'; sleep 2; done"
                let image = spec.sections.waitImage ?? DependencyWait.image
                var c: [(String, YValue)] = [
                    ("name", .string(NameRules.dnsLabel("wait-for-\(dep)"))), ("image", .string(image)),
                    ("imagePullPolicy", .string("IfNotPresent")),
                    ("command", .list([.string("sh"), .string("-c"), .string(script)])),
                    (
                        "resources",
                        .map([
                            ("requests", .map([("cpu", .string("10m")), ("memory", .string("16Mi"))])),
                            ("limits", .map([("cpu", .string("100m")), ("memory", .string("32Mi"))])),
                        ])
                    ),
                ]
                c.append(
                    (
                        "securityContext",
                        .map(
                            [
                                ("allowPrivilegeEscalation", .bool(false)),
                                ("capabilities", .map([("drop", .list([.string("ALL")]))])),
                            ]
                                + (restricted ? [("runAsNonRoot", .bool(true))] : []))
                    ))
                out.append(.map(c))
            }
        }
        return out
    }
}
