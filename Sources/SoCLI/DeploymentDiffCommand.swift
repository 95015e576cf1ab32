import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentDiffCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show a workspace's changes against the commit it started from (commits, uncommitted and new files).",
        discussion: """
            The patch applies with 'git apply' on the commit the workspace was cloned at. The workspace's own index is not touched.

            When the cluster's latest revision of the deployment's record is one its gate refuses (a teammate's, not \
            yet on this machine), diff lists instead what it refuses, one line each: the file, the key and what it \
            does (a privileged container, a host port, a file of this machine it reads, a command it runs here). \
            Nothing is written. After reading it, --accept-privilege on the verb takes what is privilege only.

            -o json gives the branch, base, commits, uncommitted changes and the patch.

            Example:
              so deployment --name fix-login diff
              so deployment --name fix-login diff --stat
              so deployment --name fix-login diff --patch fix-login.patch
            """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "A summary of changed files instead of the patch.") var stat = false
    @Option(
        name: .long, help: ArgumentHelp("Write the patch to this file instead of standard output.", valueName: "file"))
    var patch: String?
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func validate() throws {
        if stat && patch != nil {
            throw ValidationError("--stat and --patch contradict each other: a patch file holds the whole diff")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx)
        // A revision the gate refuses is shown, not made into files: what it refuses, each setting and where.
        if !ctx.options.acceptPrivilege,
            let review = try await RecordAction(ctx).review(
                name: target.deployment.name, directory: try target.existing(ctx), cluster: target.options()),
            !review.findings.isEmpty
        {
            if output == .json {
                ctx.console.out(JSONOut.encode(RefusedRevisionJSON(review)))
            } else {
                ctx.console.out(
                    TerminalText.safe("\(review.described) is refused by the record's gate (\(target.address)):"))
                for f in review.findings { ctx.console.out("  " + TerminalText.safe(f.description)) }
            }
            return
        }
        let (state, text) = try await WorkspaceGitAction(ctx).diff(
            target.dir(ctx), cluster: target.options(), stat: stat)
        if output == .json {
            ctx.console.out(JSONOut.encode(DiffJSON(state: state, patch: text)))
        } else if let patch {
            let path = ctx.absolute(patch)
            try AtomicWrite.text(text, to: path, fs: ctx.fs)
            let size = text.isEmpty ? "no changes" : "\(text.split(separator: "\n").count) lines"
            ctx.say("wrote \(path) (\(size)); apply it on \(state.base.prefix(12)) with: git apply \(patch)")
        } else if !text.isEmpty {
            ctx.console.out(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        }
    }
}
