import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentUpCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Same as start (laconic-so's alias, with the same defaults).",
        discussion: """
            Example:
              so deployment --dir deployments/example up
            """
    )
    static let takes = StartOptions.takes
    @OptionGroup var options: StartOptions
    var given: [GroupOption] { options.target.given }
    func run(_ ctx: SoContext) async throws { try await options.run(ctx) }
}
