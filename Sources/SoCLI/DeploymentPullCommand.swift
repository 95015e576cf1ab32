import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy

struct DeploymentPullCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Write the deployment directory from the cluster's latest record of it.",
        discussion: """
            Each start writes what the deployment directory holds (less secret values) to the cluster, as Helm keeps \
            releases. pull takes the latest revision back: files that differ keep their old content as FILE.bak; data/ \
            and kubeconfig.yml are left alone. With --name on a machine where $SO_HOME/deployments/NAME does not exist, \
            every verb makes it from the record first.

            Example:
              so deployment --dir deployments/example pull
              so deployment --name my-workspace pull -o json
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    struct Result: Encodable {
        var directory: String
        var revision: Int
        var writtenBy: String
        var writtenAt: String
        var changed: [String]
    }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            let p = try await RecordAction(ctx).pull(directory: target.dir(ctx), cluster: target.options(manage: false))
            return Result(
                directory: p.directory, revision: p.revision, writtenBy: p.writer.description,
                writtenAt: Timestamps.rfc3339(p.time), changed: p.changed)
        } text: { r in
            [
                "pulled revision \(r.revision) of the record (written by \(r.writtenBy) at \(r.writtenAt)) into \(r.directory)"
            ]
                + (r.changed.isEmpty ? ["  no changes"] : r.changed.map { "  \($0)" })
        }
    }
}
