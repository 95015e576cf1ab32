import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoWorkspace

struct PoolListCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the cluster's warm pools and their members (the default of 'pool').",
        discussion: """
            Example:
              so pool list
              so pool list -o json
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        let options = cluster.options(manage: false)
        var pools: [(PoolRecord, [PoolAction.Member])] = []
        for p in try await PoolStore.open(ctx, options).all() {
            pools.append((p, try await PoolAction(ctx).members(p.name, cluster: options)))
        }
        PoolText.print(pools, json: output == .json, ctx)
    }
}
