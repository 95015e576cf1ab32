import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentLogCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show a workspace's commits since it started (newest first) and what is not committed.",
        discussion: """
            Example:
              so deployment --name fix-login log
              so deployment --name fix-login log -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).log(target.dir(ctx), cluster: target.options())
        } text: { log in
            let since = log.base.isEmpty ? "the start" : String(log.base.prefix(12))
            var lines = [
                "\(log.branch): \(log.commits.count) \(English.plural("commit", log.commits.count)) since \(since)"
            ]
            lines += log.commits.map { c in "\(c.commit.prefix(12)) \(c.subject) (\(c.author), \(c.date))" }
            if !log.uncommitted.isEmpty {
                let changes = English.plural("change", log.uncommitted.count)
                lines.append(
                    "\(log.uncommitted.count) uncommitted \(changes): \(English.shortList(log.uncommitted, at: 5))")
            }
            return lines
        }
    }
}
