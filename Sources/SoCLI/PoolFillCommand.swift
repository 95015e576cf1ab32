import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoWorkspace

struct PoolFillCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "fill",
        abstract: "Make a pool full again (after a refill failed, or members were removed by hand).",
        discussion: """
            Example:
              so pool fill agent-workspace

            A claim (so up) refills its pool this way, in a process of its own: so pool fill POOL --at-most 1 --after 1.
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "The pool's name.") var name: String
    @Option(
        name: .customLong("at-most"),
        help: ArgumentHelp("Make at most N members (a claim's refill makes one).", valueName: "n"))
    var atMost: Int?
    @Option(
        name: .customLong("after"),
        help: ArgumentHelp(
            "Wait this many seconds first (a claim's refill leaves the node to the claimer a moment).",
            valueName: "seconds"))
    var after: Double?
    @Option(
        name: .customLong("stack"),
        help: ArgumentHelp(
            "This machine's copy of the pool's stack, where the pool names a path this machine does not have.",
            valueName: "path"))
    var stack: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        // NaN, a negative or an endless wait is no wait that was meant.
        if let after, !(0...3600).contains(after) {
            throw SoError.usage("--after is 0 to 3600 seconds: \(after) is not that", hint: "pass --after 1")
        }
        try NameRules.checkWorkspaceName(name)
        // The wait comes first: a claim's refill starts as the claim returns, and its connection to the API server
        // (a TLS handshake here, a read there) made then slowed the claimer's first exec (100-150 ms where the next
        // ones took 70-90, the real node).
        if let after, after > 0 { try await ctx.clock.sleep(seconds: after) }
        let options = cluster.options(manage: true)
        guard let record = try await PoolStore.open(ctx, options).load(name) else {
            throw SoError("no pool named '\(name)' on the cluster", hint: "see the pools: so pool list")
        }
        let members = try await PoolAction(ctx).fill(
            record, cluster: options, atMost: max(atMost ?? .max, 0),
            stack: stack.map { PoolRecord.stackKey(ctx, $0) })
        PoolText.print([(record, members)], json: false, ctx)
    }
}
