import Foundation
import ArgumentParser
import SoActions
import SoBasics

struct DeploymentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deployment",
        abstract: "Work with a deployment directory (--dir D).",
        discussion: """
        Example:
          so deployment --dir deployments/example render
        """,
        subcommands: [DeploymentRenderCommand.self]
    )
}

/// Options of the `deployment` group.
struct DeploymentOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Deployment directory made by 'so deploy create'.", valueName: "dir"))
    var dir: String
}

struct DeploymentRenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the Kubernetes objects start applies, in apply order (no cluster needed).",
        discussion: """
        The output is the same bytes on every run. Generated secret values never appear: the Secret holding them is referenced, and rendered with placeholder values only with --placeholder-secrets.

        Example:
          so deployment --dir deployments/example render
          so deployment --dir deployments/example render -o json
          so deployment --dir deployments/example render --output deployments/example/k8s
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var deployment: DeploymentOptions
    @Option(name: .long, help: ArgumentHelp("Directory to write one file per object into, or - for stdout.", valueName: "dir|-")) var output = "-"
    @Option(name: [.customShort("o"), .long], help: "Format: yaml or json (-o json).") var format: ManifestFormat = .yaml
    @Flag(name: .long, help: "Include the generated-secrets Secret with placeholder values.") var placeholderSecrets = false

    enum ManifestFormat: String, ExpressibleByArgument { case yaml, json }

    func run() async throws {
        let ctx = global.context()
        try RenderAction(ctx).run(RenderRequest(directory: deployment.dir, output: output, format: format == .yaml ? .yaml : .json, placeholderSecrets: placeholderSecrets))
    }
}
