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
                let script = "until nc -z -w 2 \(NameRules.serviceName(dep)) \(port); do echo 'waiting for \(dep):\(port)'; sleep 2; done"
                let image = spec.sections.waitImage ?? DependencyWait.image
                var c: [(String, YValue)] = [("name", .string(NameRules.dnsLabel("wait-for-\(dep)"))), ("image", .string(image)),
                                             ("imagePullPolicy", .string("IfNotPresent")), ("command", .list([.string("sh"), .string("-c"), .string(script)])),
                                             ("resources", .map([("requests", .map([("cpu", .string("10m")), ("memory", .string("16Mi"))])),
                                                                 ("limits", .map([("cpu", .string("100m")), ("memory", .string("32Mi"))]))]))]
                c.append(("securityContext", .map([("allowPrivilegeEscalation", .bool(false)), ("capabilities", .map([("drop", .list([.string("ALL")]))]))]
                                                  + (restricted ? [("runAsNonRoot", .bool(true))] : []))))
                out.append(.map(c))
            }
        }
        return out
    }
}

/// laconic-so's sidecar rewrite, narrowed: a sibling service name becomes `localhost` only where it is a
/// host — the whole value, `name:PORT`, `@name`, `//name` — never inside paths, words or prose.
public enum SiblingRewrite {
    public static func apply(_ value: String, siblings: [String]) -> String {
        var out = value
        for name in siblings.sorted(by: { $0.count > $1.count }) where out.contains(name) {
            if out == name { return "localhost" }
            let n = NSRegularExpression.escapedPattern(for: name)
            let patterns = [#"(?<=@|//)"# + n + #"(?=[:/?#]|$)"#, #"(?<![A-Za-z0-9_./@-])"# + n + #"(?=:[0-9])"#]
            for p in patterns {
                out = out.replacingOccurrences(of: p, with: "localhost", options: .regularExpression)
            }
        }
        return out
    }
}

/// What `depends_on` waits for on a plain compose stack: each dependency's first port.
public enum DependencyWait {
    /// The wait's image, unless the spec's `wait-image` names another.
    public static let image = "busybox:1.36"

    /// (dependency, port) pairs a service waits for; dependencies without a port, or that must complete, are skipped.
    static func targets(_ svc: ComposeService, ports: PortPlan) -> [(String, Int)] {
        svc.dependsOn.compactMap { d in
            guard d.condition != "service_completed_successfully", let dep = ports.service(d.service), let port = dep.firstPort else { return nil }
            return (dep.name, port)
        }
    }
}
