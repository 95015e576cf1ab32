import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy

struct DeploymentRollbackCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Start a previous revision of the deployment's record again, as its next revision.",
        discussion: """
            The revision's files (see 'history') are written into the deployment directory (files that differ keep \
            their old content as FILE.bak) and started, as the record's next revision with verb rollback. Like every \
            start it returns when the old version runs and answers again. Without REV: the revision the latest was \
            made from.

            Example:
              so deployment --name my-workspace rollback
              so deployment --dir deployments/example rollback 3
            """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: ArgumentHelp("The revision to go back to (default: the one before the latest).", valueName: "rev"))
    var revision: Int?
    @Flag(name: .long, help: "Return after applying, without waiting.") var noWait = false
    @Flag(name: .long, help: "Replace the directory's own changes too (it is out of step with the cluster's record).")
    var force = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }
    @Option(name: .long, help: "Progress output: auto, plain or json.") var progress: ProgressMode = .auto

    func validate() throws {
        if let revision, revision < 1 { throw ValidationError("a revision is a number from 1 (see 'history')") }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx, root: rootOption)
        var req = StartRequest(
            directory: try await target.dir(ctx), cluster: target.options(manage: true), wait: !noWait,
            timeout: timeout, progress: progress)
        req.force = force
        let (from, to, _) = try await RecordAction(ctx).rollback(req, to: revision)
        ctx.say("rolled back from revision \(from) to \(to)'s files, now revision \(from + 1)")
    }
}
