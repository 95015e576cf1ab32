import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentRenderCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the Kubernetes objects start applies, in apply order (no cluster needed).",
        discussion: """
            The output is the same bytes on every run. Generated secret values never appear: the Secret holding them is referenced, and rendered with \
            placeholder values only with --placeholder-secrets.

            --output-dir writes one file per object (NN-kind-name.yaml) and a .so-render index; a later render \
            replaces exactly the files it wrote. A directory \
            holding other files is refused unless --force, and nothing render did not write is ever removed.

            Example:
              so deployment --dir deployments/example render
              so deployment --dir deployments/example render -o json
              so deployment --dir deployments/example render --output-dir deployments/example-k8s
              so deployment --dir deployments/example render --report
            """
    )

    /// Render needs no cluster and does not wait.
    static let takes: Set<GroupOption> = [.dir, .name, .format]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var format: Formatted<ManifestFormat>
    var output: ManifestFormat { format.value }
    @Option(
        name: .long,
        help: ArgumentHelp("Directory to write one file per object into (instead of stdout).", valueName: "dir"))
    var outputDir: String?
    @Flag(name: .long, help: "With --output-dir: write into a directory that holds other files (they are left alone).")
    var force = false
    @Flag(name: .long, help: "Include the generated-secrets Secret with placeholder values.") var placeholderSecrets =
        false
    @Flag(name: .long, help: "Instead of manifests, list what each compose key became (mapped, approximated, ignored).")
    var report = false

    @ParentCommand var group: DeploymentCommand
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { group.given + so.given }

    enum ManifestFormat: String, OutputChoice {
        case yaml, json
        static let byDefault = ManifestFormat.yaml
    }

    func validate() throws { try deployment.requireOne() }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        if report {
            let entries = try RenderAction(ctx).report(deployment.directory(ctx))
            ctx.console.out(output == .json ? JSONOut.encode(entries) : MappingReport.text(entries).trimmedNewlines)
            return
        }
        try RenderAction(ctx).run(
            RenderRequest(
                directory: deployment.directory(ctx), output: outputDir ?? "-", format: output == .yaml ? .yaml : .json,
                placeholderSecrets: placeholderSecrets, force: force))
    }
}
