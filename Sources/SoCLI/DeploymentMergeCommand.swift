import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentMergeCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge a workspace's branch into your current branch (no push needed).",
        discussion: """
            The branch (agent/NAME) comes into the repository the current directory is in (or --into DIR) through a git bundle, under the same name (or \
            --branch), and is merged into the branch checked out there. Uncommitted changes in the workspace are not on the branch: 'apply' takes them. A \
            conflict stops the merge as git does.

            Example:
              so deployment --name fix-login merge
              so deployment --name fix-login merge --into ~/src/web
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var local: IntoOption
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Local branch the work arrives on (default: the workspace's branch name).",
            valueName: "branch")) var branch: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await WorkspaceReturnAction(ctx).merge(
                target.dir(ctx), cluster: target.options(), into: local.into, localBranch: branch)
        } text: { r in
            guard r.merged else { return ["\(r.branch) holds no commits since the start; nothing to merge"] }
            return [
                "merged \(r.branch) (\(r.commits) \(English.plural("commit", r.commits))) into \(r.into) in \(r.repository) (now \(r.commit.prefix(12)))"
            ]
        }
    }
}
