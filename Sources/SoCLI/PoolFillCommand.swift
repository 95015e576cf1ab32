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
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "The pool's name.") var name: String
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        guard let record = try PoolRecord.load(ctx, name) else {
            throw SoError("no pool named '\(name)' on this host", hint: "see the pools: so pool list")
        }
        let members = try await PoolAction(ctx).fill(record, cluster: cluster.options(manage: true))
        PoolText.print([(record, members)], json: false, ctx)
    }
}
