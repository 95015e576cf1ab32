import Foundation
import SoBasics
import SoCompose

public enum DeployTarget: String, Sendable, CaseIterable {
    case k8sKind = "k8s-kind"
    case k8s = "k8s"

    /// Parses a `deploy-to` value; `compose` is out of scope and a typo gets a suggestion.
    public static func parse(_ value: String, at location: SourceLocation?) throws -> DeployTarget {
        if let t = DeployTarget(rawValue: value) { return t }
        if value == "compose" {
            throw SoError(
                "deploy-to 'compose' is not supported by so",
                hint:
                    "so deploys to Kubernetes: use k8s-kind (local kind cluster) or k8s (any cluster with a kubeconfig)",
                at: location)
        }
        let close = Suggest.closest(to: value, in: allCases.map(\.rawValue))
        throw SoError(
            "unknown deploy-to '\(value)'",
            hint: (close.map { "did you mean '\($0)'? " } ?? "") + "use k8s-kind or k8s", at: location)
    }
}
