import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentShellCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Open an interactive shell in a service's container (in /workspace when it exists).",
        discussion: """
            Uses kubectl. The service defaults to the first service of the stack's first pod (agent, for agent-workspace).

            Example:
              so deployment --name fix-login shell
              so deployment --dir deployments/example shell web
            """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Service (container) name.") var service: String?

    func run(_ ctx: SoContext) async throws {
        let code = try await ObserveAction(target.context(ctx)).shell(
            target.dir(ctx), cluster: target.options(manage: false), service: service)
        if code != 0 { throw ExitCode(code) }
    }
}
