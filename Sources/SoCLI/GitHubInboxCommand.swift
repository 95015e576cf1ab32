import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct GitHubInboxCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: "List GitHub's deliveries in the cluster's inbox, oldest first (the default of 'github').",
        discussion: """
            Each delivery: its id, when it was received, the repository and the issue's or pull request's number, the \
            event and its action, its state (pending, taken, done, failed) and who sent it. No title, body or comment \
            is printed.

            Example:
              so github inbox
              so github inbox --state pending -o json
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Option(help: ArgumentHelp("Only the deliveries in this state (pending, taken, done, failed).", valueName: "state"))
    var state: String?
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        if let state, !GitHubInboxText.states.contains(state) {
            throw SoError(
                "unknown state '\(state.prefix(40))'", hint: "one of: \(GitHubInboxText.states.joined(separator: ", "))"
            )
        }
        let target = try await ClusterTargets(ctx: ctx).shared(cluster.options(manage: false))
        let entries = try await GitHubInbox(client: try ctx.connect(target.connection)).list(state: state)
        for line in GitHubInboxText.lines(entries, json: output == .json) { ctx.console.out(line) }
    }
}
