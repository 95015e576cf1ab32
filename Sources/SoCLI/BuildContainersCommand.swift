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
            exists is skipped unless --force-rebuild. --agent NAME adds the image the stack's agents: entry names (e.g. so-agent-workspace-claude:local), \
            built from container-build/<its name>/ after the wheels its wheels.txt pins are downloaded (python3 -m pip download), so the build needs \
            no network; the stack's own images are its base, built when missing (--force-rebuild rebuilds them only with --include). \
            DOCKER names the engine (e.g. a buildah wrapper); else docker, or KIND_EXPERIMENTAL_PROVIDER's.

            Example:
              so --stack agent-workspace build-containers
              so --stack ./web/stack-orchestrator/stacks/web build-containers --include api --force-rebuild
              so --stack agent-workspace build-containers --dry-run
              so --stack agent-workspace build-containers --agent claude
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
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also build the image of this entry of the stack's agents: table (its image:, with the CLI installed from pinned wheels).",
            valueName: "name"))
    var agent: String?
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
        req.agent = agent
        req.dryRun = dryRun
        try await BuildAction(global.context(ctx, root: rootOption)).run(req)
    }
}
