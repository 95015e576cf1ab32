import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentApplyCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Write a workspace's changes into your working tree, uncommitted.",
        discussion: """
            Everything the workspace changed since it started — its commits and its uncommitted changes, new files included — is applied with git apply to the \
            repository the current directory is in (or --into DIR), and left uncommitted there. What was carried in from your checkout (--include-uncommitted) \
            is not applied again. All or nothing: a change that does not fit leaves your tree untouched. Afterwards 'so down' counts that work as saved.

            Example:
              so deployment --name fix-login apply
              git diff
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).apply(target.dir(ctx), cluster: target.options(), into: local.into)
        } text: { r in
            r.files.isEmpty
                ? []
                : [
                    "applied \(r.files.count) \(English.plural("file", r.files.count)) into \(r.repository), uncommitted: \(English.shortList(r.files, at: 8))"
                ]
        }
    }
}
