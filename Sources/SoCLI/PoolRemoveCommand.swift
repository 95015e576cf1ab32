import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoWorkspace

struct PoolRemoveCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a pool: its members not claimed, and its record (claimed ones are workspaces of their own).",
        discussion: """
            Example:
              so pool remove agent-workspace
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "The pool's name.") var name: String
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        try await PoolAction(global.context(ctx)).remove(name, cluster: cluster.options(manage: false))
    }
}
