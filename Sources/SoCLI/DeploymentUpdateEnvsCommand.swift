import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentUpdateEnvsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "update-envs",
        abstract: "Re-apply the Deployments' environment from config.env and the compose files, and wait.",
        discussion: """
            Only Deployments are applied (each container gets its own environment; pods roll where it changed). Nothing is pruned.

            Example:
              so deployment --dir deployments/example update-envs
            """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "Return without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        var start = StartRequest(
            directory: try await target.dir(ctx), cluster: target.options(), wait: !noWait,
            timeout: timeout, progress: .plain, onlyKinds: ["Deployment"])
        start.verb = "update-envs"
        try await StartAction(target.context(ctx, root: rootOption)).run(start)
    }
}
