import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeployInitCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a spec file (per-deployment overrides) for a stack.",
        discussion: """
            The spec lists the stack's ports, volumes and config; edit it, then run 'so deploy create'.

            --config may be repeated; values may contain ',' and '='. laconic-so's K=V,K2=V2 still splits into two pairs where an upper-case NAME= follows a \
            comma. Command-line config wins over the stack's spec-defaults.

            Example:
              so --stack example deploy init --output spec.yml --config GREETING=hello
              so --stack agent-workspace deploy init --output ws.yml --with postgres,redis --config GIT_REPO=https://github.com/org/repo
              so --stack ./my-repo/stack-orchestrator/stacks/web deploy --deploy-to k8s init --kube-config ~/.kube/config --image-registry \
            registry.example.org/web --output web.yml
            """
    )

    static let takes: Set<GroupOption> = [.specOutput, .dryRun]
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @OptionGroup var group: DeployGroupOptions
    @OptionGroup var spec: SpecOutputOption
    var output: String { spec.output ?? "" }
    @Option(
        name: .long, parsing: .singleValue, help: ArgumentHelp("Config value KEY=VALUE (repeatable).", valueName: "K=V")
    ) var config: [String] = []
    @Option(name: .long, help: ArgumentHelp("A .env file of config values.", valueName: "file")) var configFile: String?
    @Option(name: .long, help: ArgumentHelp("Kubeconfig for --deploy-to k8s.", valueName: "file")) var kubeConfig:
        String?
    @Option(name: .long, help: ArgumentHelp("Registry for images, --deploy-to k8s.", valueName: "url"))
    var imageRegistry: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The kind node image the cluster is created from (k8s-kind), e.g. kindest/node:v1.31.0.", valueName: "image"
        ))
    var kindNodeImage: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Publish ports to the host: any-variable-random, localhost-same, any-same, localhost-fixed-random, any-fixed-random.",
            valueName: "recipe"))
    var mapPortsToHost: String?
    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Optional pods of the stack to include, e.g. postgres,redis (asked on a terminal when omitted).",
            valueName: "pods"))
    var with: [String] = []
    @Option(
        name: [.customShort("f"), .customLong("file")], parsing: .singleValue,
        help: ArgumentHelp(
            "A compose file as the stack (repeatable, merged in order like docker compose -f); instead of --stack.",
            valueName: "file"))
    var files: [String] = []
    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Compose profile to deploy (repeatable); services of other profiles are left out.",
            valueName: "name"))
    var profile: [String] = []
    @Flag(name: .long, help: "Overwrite the output file if it exists.") var force = false
    @OptionGroup var dry: DryRunFlag
    @ParentCommand var deploy: DeployCommand
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { deploy.given + so.given }

    func validate() throws {
        if spec.output == nil { throw ValidationError("missing expected argument '--output <file>'") }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx, root: rootOption, dryRun: dry.dryRun)
        if !files.isEmpty && stackOption.stack != nil {
            throw SoError.usage(
                "give either --stack or -f files, not both",
                hint: "-f names compose files: so deploy init -f compose.yaml -f compose.prod.yaml --output spec.yml")
        }
        var req = InitRequest(
            stack: files.isEmpty ? try stackOption.require("deploy init") : "", deployTo: group.deployTo,
            config: config, configFile: configFile,
            kubeConfig: kubeConfig, imageRegistry: imageRegistry, mapPortsToHost: mapPortsToHost, output: output,
            force: force)
        req.composeFiles = files
        req.with = with.isEmpty ? nil : with
        req.profiles = profile
        req.kindNodeImage = kindNodeImage
        req.dryRun = dry.dryRun
        try await InitAction(ctx).run(req)
    }
}
