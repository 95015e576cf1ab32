import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

/// Options of `start` and its alias `up` (one set, one default: cluster management on).
struct StartOptions: ParsableArguments {
    static let takes = DeploymentTarget.takes.union([.timeout, .dryRun])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    @Flag(name: .long, help: "Create the kind cluster if needed and load images (default).")
    var performClusterManagement = false
    @Flag(name: .long, help: "Do not create kind clusters or load images.") var skipClusterManagement = false
    @Flag(name: .long, help: "Return after applying, without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }
    @Option(name: .long, help: "Progress output: auto, plain or json.") var progress: ProgressMode = .auto
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Expire this long after the start (for 'so cleanup --expired'), e.g. 2h.", valueName: "duration")) var ttl:
        String?
    /// --dry-run: Change nothing: the API server checks every object (server-side dry run) and the plan is printed.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(
        name: .long,
        help: "With --dry-run: show each field that would change, as kubectl diff does (never a Secret's values).")
    var diff = false
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "With --dry-run: exit 2 when the plan would change something, 0 when every object is unchanged "
                + "(1 stays an error), as terraform plan -detailed-exitcode; for drift checks in CI."))
    var detailedExitcode = false
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Start this directory even when the cluster's record of the deployment moved on since the directory was "
                + "last in step with it (someone else started it): it becomes the record's next revision."))
    var force = false
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "In a directory written from the cluster's record (--name on a machine without it, pull, rollback), copy "
                + "the secret-env variables the record names from this environment too, not only those this machine "
                + "copied before (the others keep the values the cluster holds)."))
    var copySecretEnv = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Revisions of the deployment's record the cluster keeps (default: the spec's record-history:, else 10).",
            valueName: "n"))
    var history: Int?

    func validate() throws {
        if diff && !dryRun { throw ValidationError("--diff goes with --dry-run (start --dry-run --diff)") }
        if detailedExitcode && !dryRun {
            throw ValidationError("--detailed-exitcode goes with --dry-run (start --dry-run --detailed-exitcode)")
        }
        if let history, !(1...100).contains(history) { throw ValidationError("--history takes 1 to 100") }
        if performClusterManagement && skipClusterManagement {
            throw ValidationError("--perform-cluster-management and --skip-cluster-management contradict each other")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx, root: rootOption)
        if dryRun {
            let plan = try await StartAction(ctx).run(
                StartRequest(
                    directory: target.dir(ctx), cluster: target.options(manage: !skipClusterManagement),
                    progress: progress, ttl: try ttl.map(parseTTL), dryRun: true, diff: diff)
            ).plan
            if progress == .json {
                for p in plan { ctx.console.out(JSONOut.encode(p)) }
            } else {
                for p in plan {
                    ctx.console.out(p.line)
                    for line in p.diff ?? [] { ctx.console.out("    " + line) }
                }
                ctx.say("dry run: nothing was changed")
            }
            if detailedExitcode, PlannedChange.changes(plan) { throw ExitCode(PlannedChange.exitChanges) }
            return
        }
        var req = StartRequest(
            directory: try await target.dir(ctx), cluster: target.options(manage: !skipClusterManagement),
            wait: !noWait, timeout: timeout, progress: progress, ttl: try ttl.map(parseTTL))
        req.force = force
        req.history = history
        req.copySecretEnv = copySecretEnv
        try await StartAction(ctx).run(req)
    }
}
