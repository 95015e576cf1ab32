import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

struct StackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "List and inspect stacks.",
        discussion: """
        Example:
          so stack list
          so stack show example
        """,
        subcommands: [StackListCommand.self, StackShowCommand.self, StackNewCommand.self]
    )
}

struct StackListCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the built-in stacks.",
        discussion: """
        Example:
          so stack list
          so stack list -o json
        """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx, root: rootOption)
        let stacks = try StackInfoAction(ctx).list()
        switch output {
        case .json: ctx.console.out(JSONOut.encode(stacks))
        case .text:
            if stacks.isEmpty { ctx.console.out("no stacks in \(Path.join(ctx.builtInRoot ?? "", "stacks"))"); return }
            let width = stacks.map(\.name.count).max() ?? 0
            for s in stacks {
                ctx.console.out(s.name.padding(toLength: width + 2, withPad: " ",
                    startingAt: 0) + (s.description ?? "") + (s.pods.isEmpty ? "" : "  [pods: \(s.pods.map(\.name).joined(separator: ", "))]"))
            }
        }
    }
}

struct StackShowCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a stack's pods, compose files, config directories and images.",
        discussion: """
        Example:
          so stack show example
          so stack show ~/cerc/my-repo/stack-orchestrator/stacks/web -o json
        """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Built-in stack name or stack directory path.", valueName: "name|path")) var stackName: String?
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx, root: rootOption)
        guard let name = stackName ?? stackOption.stack else {
            throw SoError.usage("stack show needs a stack", hint: "pass a name or path: so stack show NAME")
        }
        let info = try StackInfoAction(ctx).show(name)
        switch output {
        case .json: ctx.console.out(JSONOut.encode(info))
        case .text:
            ctx.console.out("stack:       \(info.name)\(info.builtIn ? " (built-in)" : "")")
            ctx.console.out("directory:   \(info.directory)")
            if let d = info.description { ctx.console.out("description: \(d)") }
            for p in info.pods {
                ctx.console.out("pod \(p.name): \(p.composeFile)")
                for s in p.services {
                    let ports = s.ports.isEmpty ? "" : "  ports \(s.ports.joined(separator: " "))"
                    ctx.console.out("  service \(s.name): \(s.image ?? "(build)")\(ports)")
                }
            }
            for j in info.jobs { ctx.console.out("job \(j.name): \(j.composeFile)") }
            for c in info.configDirectories { ctx.console.out("config:      \(c)") }
            if !info.images.isEmpty { ctx.console.out("images:      \(info.images.joined(separator: " "))") }
            if !info.repos.isEmpty { ctx.console.out("repos:       \(info.repos.joined(separator: " "))") }
        }
    }
}

/// `-o json` output: through the one JSON writer (SoBasics' `JSONWriter`, report layout).
enum JSONOut {
    static func encode<T: Encodable>(_ value: T) -> String { JSONWriter.encode(value, .report) }
}

extension OutputFormat {
    /// How a verb prints the result of its action: under json the action runs quiet (standard output holds the JSON
    /// alone) and the result is written as JSON; under text, `text` gives the lines to print.
    func report<R: Encodable>(_ ctx: SoContext, _ action: (SoContext) async throws -> R, text: (R) -> [String]) async throws {
        var ctx = ctx
        if self == .json { ctx.options.quiet = true }
        let result = try await action(ctx)
        for line in self == .json ? [JSONOut.encode(result)] : text(result) { ctx.console.out(line) }
    }
}

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
    @Option(name: .long, help: ArgumentHelp("Only these containers or services (comma-separated).", valueName: "names")) var include: String?
    @Option(name: .long, help: ArgumentHelp("Skip these containers or services (comma-separated).", valueName: "names")) var exclude: String?
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

struct StackNewCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a stack (laconic layout) from plain compose files.",
        discussion: """
        Writes DIR/stacks/NAME/stack.yml, DIR/compose/docker-compose-NAME.yml (the files merged as docker compose -f merges them) and copies what the \
        compose file mounts, its env files, configs and build contexts under DIR/config/NAME/, rewriting the paths. Secret files are not copied. DIR \
        defaults to ./NAME.

        Example:
          so stack new shop --from compose.yaml
          so stack new shop --from compose.yaml --from compose.prod.yaml --output ~/stacks/shop
        """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Name of the new stack.") var name: String
    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Compose file (repeatable; merged in order).", valueName: "file")) var from: [String] = []
    @Option(name: .long, help: ArgumentHelp("Directory to write (default: ./NAME).", valueName: "dir")) var output: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        try await StackNewAction(global.context(ctx)).run(StackNewRequest(name: name, from: from, output: output))
    }
}
