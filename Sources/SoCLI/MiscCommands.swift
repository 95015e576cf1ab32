import Foundation
import ArgumentParser
import SoActions
import SoBasics

struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version of so.",
        discussion: """
        Example:
          so version
        """
    )
    func run() async throws { SoRuntime.context.console.out("so \(SoVersion.current)") }
}

struct CompletionCommand: AsyncParsableCommand {
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
    @Argument(help: "bash, zsh or fish") var shell: String

    func run() async throws {
        guard let kind = CompletionShell(rawValue: shell) else {
            throw SoError.usage("unknown shell '\(shell)'", hint: "use bash, zsh or fish")
        }
        SoRuntime.context.console.out(SoCommand.completionScript(for: kind))
    }
}
