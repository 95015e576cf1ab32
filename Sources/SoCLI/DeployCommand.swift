import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeployCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deploy",
        abstract: "Make specs and deployment directories from a stack.",
        discussion: """
            Example:
              so --stack example deploy --deploy-to k8s-kind init --output spec.yml
              so deploy create --spec-file spec.yml --deployment-dir deployments/example
            """,
        subcommands: [DeployInitCommand.self, DeployCreateCommand.self],
        aliases: ["deploy-system"]
    )

    // The group's options (they parse before or after the verb: `so deploy --deploy-to k8s init`, `so deploy init
    // --deploy-to k8s`); a verb that takes one declares the same option group and reads this value.
    @OptionGroup var group: DeployGroupOptions
    @OptionGroup var spec: SpecOutputOption

    var given: [GroupOption] { spec.given }
}
