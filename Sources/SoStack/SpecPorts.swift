import Foundation
import SoBasics
import SoCompose

/// The spec's `network.ports` replace the `ports:` of each service they name, as laconic-so does when it
/// copies the compose files; `so` does it in the model, so render, the report and kind-config agree.
public enum SpecPorts {
    /// Replaces the ports of the services the spec lists, each entry parsed after interpolation with
    /// `environment` (the values the compose files were interpolated with). A name no service has is a
    /// warning (with the closest name): its ports would otherwise be dropped without a word.
    public static func apply(
        _ spec: Spec, to components: inout [ComposeComponent], environment: [String: String],
        otherServices: [String] = [],
        diagnostics: DiagnosticSink
    ) throws {
        let known = components.flatMap { $0.compose.services.map(\.name) } + otherServices
        for entry in spec.ports {
            let ports = try ComposePorts.parse(entry.entries, environment: environment, diagnostics: diagnostics)
            guard known.contains(entry.service) else {
                let close = Suggest.closest(to: entry.service, in: known)
                diagnostics.warn(
                    "network.ports names '\(entry.service)', which is not a service of the stack; its ports are not used",
                    hint: close.map { "did you mean '\($0)'?" } ?? "services: \(known.joined(separator: ", "))",
                    at: SourceLocation(file: spec.path, line: entry.line))
                continue
            }
            for c in components.indices {
                for s in components[c].compose.services.indices
                where components[c].compose.services[s].name == entry.service {
                    components[c].compose.services[s].ports = ports
                    components[c].compose.services[s].portEntries = entry.entries
                }
            }
        }
    }
}
