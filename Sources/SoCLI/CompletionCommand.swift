import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct CompletionCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print a shell completion script (bash, zsh or fish).",
        discussion: """
            Example:
              so completion bash > /etc/bash_completion.d/so
              so completion zsh > "${fpath[1]}/_so"
              so completion fish > ~/.config/fish/completions/so.fish
            """
    )
    static let takes: Set<GroupOption> = []
    @Argument(help: "bash, zsh or fish") var shell: String
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        guard let kind = CompletionShell(rawValue: shell) else {
            throw SoError.usage("unknown shell '\(shell)'", hint: "use bash, zsh or fish")
        }
        ctx.console.out(SoCommand.completionScript(for: kind))
    }
}
