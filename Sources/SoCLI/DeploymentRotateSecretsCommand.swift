import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentRotateSecretsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "rotate-secrets",
        abstract: "Make new values for generated secrets (all, or the named keys) and restart.",
        discussion: """
            Example:
              so deployment --dir deployments/example rotate-secrets
              so deployment --dir deployments/example rotate-secrets DB_PASSWORD
            """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Keys to rotate; all generated keys when none.") var keys: [String] = []
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        _ = try await ObserveAction(target.context(ctx, root: rootOption)).rotateSecrets(
            target.dir(ctx), cluster: target.options(manage: false), keys: keys,
            timeout: timeout)
    }
}
