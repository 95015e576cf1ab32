import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

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
            if stacks.isEmpty {
                ctx.console.out("no stacks in \(Path.join(ctx.builtInRoot ?? "", "stacks"))")
                return
            }
            let width = stacks.map(\.name.count).max() ?? 0
            for s in stacks {
                ctx.console.out(
                    s.name.padding(
                        toLength: width + 2, withPad: " ",
                        startingAt: 0) + (s.description ?? "")
                        + (s.pods.isEmpty ? "" : "  [pods: \(s.pods.map(\.name).joined(separator: ", "))]"))
            }
        }
    }
}
