import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentPsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "ps",
        abstract: "List the deployment's pods with phase, readiness and ports.",
        discussion: """
            Example:
              so deployment --dir deployments/example ps
              so deployment --dir deployments/example ps -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await ObserveAction(ctx).ps(target.dir(ctx), cluster: target.options(manage: false))
        } text: { pods in
            if pods.isEmpty { return ["no pods"] }
            let w = max(4, pods.map(\.name.count).max() ?? 0)
            var lines = [
                "NAME".padding(toLength: w + 2, withPad: " ", startingAt: 0)
                    + "PHASE              READY  RESTARTS  AGE    IP               PORTS"
            ]
            for p in pods {
                lines.append(
                    p.name.padding(toLength: w + 2, withPad: " ", startingAt: 0)
                        + p.phase.padding(toLength: 19, withPad: " ", startingAt: 0)
                        + p.ready.padding(toLength: 7, withPad: " ", startingAt: 0)
                        + String(p.restarts).padding(toLength: 10, withPad: " ", startingAt: 0)
                        + (p.ageSeconds.map(DurationText.short) ?? "-").padding(
                            toLength: 7, withPad: " ", startingAt: 0)
                        + p.ip.padding(toLength: 17, withPad: " ", startingAt: 0) + p.ports.joined(separator: ","))
            }
            return lines
        }
    }
}
