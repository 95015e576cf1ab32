import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoWorkspace

struct PoolCreateCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a warm pool of a workspace stack (again: change its size), without waiting for its members.",
        discussion: """
            Members are made with 'so up --no-wait' and named POOL-xxxxxx. They hold no one's credentials: the stack's secret-env \
            values are left out of them, and the 'so up' that claims one hands in its own (into the workspace's Secret and its \
            running container). A pool whose members push to another origin than GitHub reaches it only when that origin is in \
            their egress: --config GIT_ORIGIN=URL.

            Example:
              so pool create agent-workspace --size 3
              so pool create agent-workspace --name big --size 2 --with postgres
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "The workspace stack (a name or path, as 'so up' takes).") var stack: String
    @Option(name: .long, help: ArgumentHelp("The pool's name (default: the stack's).", valueName: "name"))
    var name: String?
    @Option(name: .long, help: ArgumentHelp("How many workspaces to keep warm (0-50).", valueName: "n")) var size = 2
    @Option(
        name: .long, parsing: .singleValue, help: ArgumentHelp("Config value KEY=VALUE (repeatable).", valueName: "K=V")
    ) var config: [String] = []
    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp("Optional pods to include, e.g. postgres,redis.", valueName: "pods")) var with: [String] = []
    @Option(name: .long, help: ArgumentHelp("The agent CLI (an entry of the stack's agents:).", valueName: "name"))
    var agent: String?
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        var ctx = global.context(ctx)
        if output == .json { ctx.options.quiet = true }
        let poolName = name ?? NameRules.dnsLabel(Path.basename(stack))
        var record = PoolRecord(name: poolName, stack: stack, size: size)
        record.config = config
        record.with = with.isEmpty ? nil : with.flatMap { $0.split(separator: ",").map(String.init) }
        record.agent = agent
        let members = try await PoolAction(ctx).create(record, cluster: cluster.options(manage: true))
        PoolText.print([(record, members)], json: output == .json, ctx)
    }
}
