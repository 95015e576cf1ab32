import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentPortForwardCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "port-forward",
        abstract: "Forward local ports to a service (through kubectl) until interrupted.",
        discussion: """
            Example:
              so deployment --dir deployments/example port-forward web 8080:80
            """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Service name.") var service: String
    @Argument(help: ArgumentHelp("Ports, [LOCAL:]REMOTE.", valueName: "ports")) var ports: [String]

    func run(_ ctx: SoContext) async throws {
        let code = try await ObserveAction(target.context(ctx)).portForward(
            target.dir(ctx), cluster: target.options(manage: false), service: service,
            ports: ports)
        if code != 0 { throw ExitCode(code) }
    }
}
