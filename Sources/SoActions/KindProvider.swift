import Foundation
import SoBasics

/// The container engine kind runs its nodes on: docker, or what `KIND_EXPERIMENTAL_PROVIDER` names
/// (`podman`, `nerdctl`). kind itself reads the variable (it inherits the environment `so` was given); `so`
/// uses the same engine's CLI for what it asks the node container (`inspect`, `exec … crictl`).
public struct KindProvider: Sendable, Equatable {
    /// The engine's command (`docker`, `podman`, `nerdctl`).
    public var cli: String

    public static let known = ["docker", "podman", "nerdctl"]

    /// From the environment; an unknown value is reported (kind ignores it too and picks docker).
    public static func from(_ environment: [String: String], diagnostics: DiagnosticSink) -> KindProvider {
        guard let v = environment["KIND_EXPERIMENTAL_PROVIDER"]?.trimmedSpaces, !v.isEmpty else {
            return KindProvider(cli: "docker")
        }
        guard known.contains(v) else {
            let close = Suggest.closest(to: v, in: known)
            diagnostics.warn(
                "KIND_EXPERIMENTAL_PROVIDER '\(v)' is not a provider kind knows; docker is used",
                hint: (close.map { "did you mean '\($0)'? " } ?? "") + "set it to one of "
                    + known.joined(separator: ", ") + ", or unset it")
            return KindProvider(cli: "docker")
        }
        return KindProvider(cli: v)
    }
}

extension SoContext {
    package var kindProvider: KindProvider { KindProvider.from(environment, diagnostics: diagnostics) }
}
