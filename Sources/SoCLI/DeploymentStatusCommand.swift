import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentStatusCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show workloads, ingress hosts and pods of the deployment.",
        discussion: """
            Example:
              so deployment --dir deployments/example status
              so deployment --dir deployments/example status -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await ObserveAction(ctx).status(target.dir(ctx), cluster: target.options(manage: false))
        } text: { s in
            var lines = [
                "deployment \(s.deployment) in namespace \(s.namespace) (\(s.cluster)): \(s.ready ? "ready" : "not ready")"
            ]
            lines += s.workloads.map { w in "  \(w.kind) \(w.name): \(w.state)" }
            for h in s.ingressHosts {
                guard let cert = s.certificates.first(where: { $0.host == h }) else {
                    lines.append("  ingress: http://\(h)/")
                    continue
                }
                let state =
                    cert.present
                    ? "present"
                    : cert.issuer.map { "not made yet by \($0)" } ?? "missing: the controller serves its default"
                lines.append("  ingress: https://\(h)/ (certificate Secret \(cert.secret): \(state))")
            }
            for p in s.pods {
                lines.append(
                    "  pod \(p.name): \(p.phase) \(p.ready) ready, \(p.restarts) restarts"
                        + (p.node.isEmpty ? "" : ", node \(p.node)")
                        + (p.ageSeconds.map { ", age \(DurationText.short($0))" } ?? ""))
            }
            return lines + s.problems.map { "  problem: \($0)" } + s.warnings.map { w in "  warning: \(w)" }
        }
    }
}
