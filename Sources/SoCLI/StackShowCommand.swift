import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

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
    @Argument(help: ArgumentHelp("Built-in stack name or stack directory path.", valueName: "name|path")) var stackName:
        String?
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
