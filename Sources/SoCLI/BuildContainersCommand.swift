import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct BuildContainersCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "build-containers",
        abstract: "Build the images a stack names, with docker (tagged :local; start loads them into kind).",
        discussion: """
            Builds each entry of stack.yml 'containers:' from container-build/<name>/ (build.sh, as laconic-so, or a Dockerfile), tagged <name>:local, and \
            every compose service with build: (context, dockerfile, args, target), tagged with its image: or <stack>-<service>:local. An image that already \
            exists is skipped unless --force-rebuild.

            Example:
              so --stack agent-workspace build-containers
              so --stack ./web/stack-orchestrator/stacks/web build-containers --include api --force-rebuild
              so --stack agent-workspace build-containers --dry-run
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("Only these containers or services (comma-separated).", valueName: "names"))
    var include: String?
    @Option(name: .long, help: ArgumentHelp("Skip these containers or services (comma-separated).", valueName: "names"))
    var exclude: String?
    @Flag(name: .long, help: "Build even when the image exists.") var forceRebuild = false
    /// --dry-run: Build nothing; print the builds that would run.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        var req = BuildRequest(stack: try stackOption.require("build-containers"))
        req.include = include?.commaSeparatedItems ?? []
        req.exclude = exclude?.commaSeparatedItems ?? []
        req.forceRebuild = forceRebuild
        req.dryRun = dryRun
        try await BuildAction(global.context(ctx, root: rootOption)).run(req)
    }
}
