import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentListCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every so deployment on the cluster (no --dir needed).",
        discussion: """
            Reads two lists from the API server (namespaces and Deployments labelled managed-by=so), however many deployments there are.

            Example:
              so deployment list
              so deployment list -o json --kubeconfig ~/.kube/config
            """
    )
    /// List takes no --dir, --name or --timeout.
    static let takes: Set<GroupOption> = [.kubeconfig, .context, .format]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }
    @ParentCommand var group: DeploymentCommand
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { group.given + so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        let rows = try await ListAction(ctx).run(cluster: cluster.options(manage: false))
        if output == .json {
            ctx.console.out(JSONOut.encode(rows.map(ListingJSON.init)))
            return
        }
        if rows.isEmpty {
            ctx.console.out("no so deployments on this cluster")
            return
        }
        let now = ctx.clock.now()
        let table =
            [["NAME", "STACK", "NAMESPACE", "AGE", "READY", "EXPIRES", "LAST WRITTEN", "DIRECTORY"]]
            + rows.map { r in
                [
                    r.name, r.stack, r.namespace,
                    r.createdAt.map { DurationText.short(max(0, Int(now.timeIntervalSince($0)))) } ?? "-",
                    r.terminating
                        ? "terminating"
                        : r.idleStopped
                            ? "idle"
                            : (r.pool.map { "pool \($0) " } ?? "") + "\(r.readyDeployments)/\(r.deployments)",
                    r.expiresAt.map {
                        $0 <= now ? "expired" : "in " + DurationText.short(Int($0.timeIntervalSince(now)))
                    } ?? "-",
                    Self.lastWritten(r, now: now),
                    r.host == ctx.hostName || r.host.isEmpty ? r.directory : "\(r.host):\(r.directory)",
                ]
            }
        for line in TextTable.lines(table) { ctx.console.out(line) }
    }

    /// "r3 alice@laptop 5m ago": the record's latest revision and its writer, "-" before any.
    static func lastWritten(_ r: DeploymentListing, now: Date) -> String {
        guard let who = r.writtenBy else { return "-" }
        var out = "r\(r.recordRevision ?? 0) " + TerminalText.safe(who)
        if let at = r.writtenAt { out += " " + DurationText.short(max(0, Int(now.timeIntervalSince(at)))) + " ago" }
        return out
    }
}
