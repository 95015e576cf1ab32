import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// The options fetch-stack and setup-repositories share: how to clone, what to change, how to print.
struct CloneOptions: ParsableArguments {
    @Flag(name: .long, help: "Clone over SSH (git@host:org/repo).") var gitSSH = false
    @Flag(name: .long, help: "Pull checkouts that are on a branch.") var pull = false
    @Flag(name: .long, help: "Only report; change nothing.") var checkOnly = false
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    @OptionGroup var dry: DryRunFlag

    /// Under `-o json` stdout holds the JSON only (as every verb's `OutputFormat.report`): progress lines are quiet.
    func context(_ ctx: SoContext) -> SoContext {
        var ctx = ctx
        if output == .json { ctx.options.quiet = true }
        return ctx
    }

    /// Under `-o json`, `json` (one result or the list, as the verb reports); otherwise each repository with the stacks found in it.
    func print<R: Encodable>(_ results: [FetchResult], json: R, ctx: SoContext) {
        if output == .json {
            ctx.console.out(JSONOut.encode(json))
            return
        }
        for r in results {
            ctx.say("\(r.repository): \(r.state.rawValue) at \(r.directory)")
            for s in r.stacks {
                ctx.say("  stack \(s.name): so --stack \(s.path) deploy init --output \(s.name)-spec.yml")
            }
        }
    }
}
