import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct CleanupCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "cleanup",
        abstract:
            "Remove deployments whose TTL passed, whose directory is gone, or that are too old; stop idle workspaces.",
        discussion: """
            Removal deletes the namespace (with everything in it), the deployment's PersistentVolumes, and the directory when 'so up' made it. --orphaned only \
            judges directories of this host (each start records the host).

            --idle stops each workspace with 'idle:' in its spec ('so up --idle 2h') that no verb used for that long and that has no task \
            queued or running and no shell or exec open: its pods go, its checkout's volume stays, and the next verb that needs its \
            container (shell, exec, task, diff, push, fetch, apply) starts it again first. It reads only the cluster, so a CronJob in the \
            cluster can run it (examples/k8s-job/so-idle-cronjob.yml).

            Example:
              so cleanup --expired
              so cleanup --expired --orphaned --dry-run
              so cleanup --older-than 24h
              so cleanup --idle
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Flag(name: .long, help: "Deployments whose --ttl has passed.") var expired = false
    @Flag(name: .long, help: "Deployments whose directory is gone on this host.") var orphaned = false
    @Flag(name: .long, help: "Stop workspaces unused for longer than their 'idle:' (volumes kept).") var idle = false
    @Option(name: .long, help: ArgumentHelp("Deployments created longer ago than this.", valueName: "duration"))
    var olderThan: String?
    @Flag(name: .long, help: "Return without waiting for namespaces to go.") var noWait = false
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    /// --dry-run: Change nothing; list what would be removed.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        var ctx = global.context(ctx)
        if output == .json { ctx.options.quiet = true }
        var req = CleanupRequest()
        req.expired = expired
        req.orphaned = orphaned
        req.olderThan = try olderThan.map(parseTTL)
        req.dryRun = dryRun
        req.wait = !noWait
        req.cluster = cluster.options(manage: false)
        let removing = expired || orphaned || olderThan != nil
        let removed = removing || !idle ? try await CleanupAction(ctx).run(req) : []
        guard idle else {
            if output == .json { ctx.console.out(JSONOut.encode(removed.map(ListingJSON.init))) }
            return
        }
        let stopped = try await IdleAction(ctx).run(req)
        if output == .json {
            ctx.console.out(
                JSONOut.encode(
                    IdleCleanupJSON(removed: removed.map(ListingJSON.init), idle: stopped.map(IdleJSON.init))))
        }
    }
}
