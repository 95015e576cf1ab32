import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeployCreateCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create (or --update) a deployment directory from a spec.",
        discussion: """
            The directory is built beside its final place and renamed into it, so a failure leaves nothing behind. No \
            --stack is needed: the spec names the stack.

            --update keeps deployment.yml and data/, saves a .bak of every file it changes and removes stack files that are gone.

            Example:
              so deploy create --spec-file spec.yml --deployment-dir deployments/example
              so deploy create --spec-file deployments/example/spec.yml --deployment-dir deployments/example --update
            """
    )

    /// Create takes no --output: it writes a directory.
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @OptionGroup var group: DeployGroupOptions
    @Option(name: .long, help: ArgumentHelp("Spec file written by 'deploy init'.", valueName: "file")) var specFile:
        String
    @Option(name: .long, help: ArgumentHelp("Deployment directory (default: deployment-001).", valueName: "dir"))
    var deploymentDir: String?
    @Flag(name: .long, help: "Refresh an existing deployment directory.") var update = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Expire this long after each start (for 'so cleanup --expired'), e.g. 2h.", valueName: "duration")) var ttl:
        String?
    @OptionGroup var dry: DryRunFlag
    @ParentCommand var deploy: DeployCommand
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { deploy.given + so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx, root: rootOption, dryRun: dry.dryRun)
        var req = CreateRequest(
            specFile: specFile, deploymentDir: deploymentDir, update: update, stack: stackOption.stack)
        req.ttl = ttl
        req.dryRun = dry.dryRun
        try await CreateAction(ctx).run(req)
    }
}
