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
        abstract: "Remove deployments whose TTL passed, whose directory is gone, or that are too old.",
        discussion: """
            Removal deletes the namespace (with everything in it), the deployment's PersistentVolumes, and the directory when 'so up' made it. --orphaned only \
            judges directories of this host (each start records the host).

            Example:
              so cleanup --expired
              so cleanup --expired --orphaned --dry-run
              so cleanup --older-than 24h
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Flag(name: .long, help: "Deployments whose --ttl has passed.") var expired = false
    @Flag(name: .long, help: "Deployments whose directory is gone on this host.") var orphaned = false
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
        let removed = try await CleanupAction(ctx).run(req)
        if output == .json { ctx.console.out(JSONOut.encode(removed.map(ListingJSON.init))) }
    }
}
