import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy

struct DeploymentHistoryCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the revisions of the deployment's record the cluster keeps.",
        discussion: """
            One line per revision, oldest first: its number, when and by whom it was written, with which verb, how \
            that start ended and which files changed (+ added, ~ changed, - removed). The cluster keeps the last 10 \
            (start --history N, or record-history: in the spec).

            Example:
              so deployment --name my-workspace history
              so deployment --dir deployments/example history -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    struct Revision: Encodable {
        var revision: Int
        var parent: Int?
        var time: String
        var user: String
        var host: String
        var verb: String
        var result: String
        var changed: String
        var version: String
        var object: String
    }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await RecordAction(ctx).history(directory: target.dir(ctx), cluster: target.options(manage: false))
                .map { h in
                    Revision(
                        revision: h.revision, parent: h.parent, time: Timestamps.rfc3339(h.time), user: h.writer.user,
                        host: h.writer.host, verb: h.verb, result: h.shownResult, changed: h.changed,
                        version: h.version, object: "Secret \(h.namespace)/\(h.name)")
                }
        } text: { revs in
            if revs.isEmpty { return ["no record yet: the next start writes revision 1"] }
            let rows = revs.map { r in
                [String(r.revision), r.time, "\(r.user)@\(r.host)", r.verb, r.result, r.changed]
                    .map { TerminalText.safe($0) }
            }
            return TextTable.lines([["REV", "WHEN", "WHO", "VERB", "RESULT", "CHANGED"]] + rows)
        }
    }
}
