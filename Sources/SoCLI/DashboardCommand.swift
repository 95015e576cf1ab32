import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDashboard
import SoDashboardServer
import SoDeploy

struct DashboardCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Serve a live web view of every deployment, workspace and task on the cluster.",
        discussion: """
            Serves on 127.0.0.1 until interrupted and prints the page's address with its token: open it once and the \
            browser keeps the token in a cookie (a page without it gets a 403). Pages change as the cluster does, \
            without a reload. The pages can queue and cancel tasks, start and stop deployments and take workspaces \
            down, through the same actions and Leases as the CLI, for deployments whose directory is on this machine; \
            --read-only turns that off. SO_DASHBOARD_TOKEN sets the token instead of a new one (a team's page in a \
            cluster: see examples/dashboard).

            Example:
              so dashboard
              so dashboard --port 9000 --read-only
              so dashboard --listen 0.0.0.0 --kubeconfig ~/.kube/config
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Option(name: .long, help: "The port to serve on (0: any free one).") var port = 7878
    @Option(name: .long, help: "The address to listen on (default: loopback only).") var listen = "127.0.0.1"
    @Flag(name: .long, help: "Offer no actions: the pages only show.") var readOnly = false
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        let options = cluster.options(manage: false)
        let feed = try await DashboardFeed.open(ctx, cluster: options)
        let fixed = ctx.environment["SO_DASHBOARD_TOKEN"].flatMap { $0.count >= 16 ? $0 : nil }
        let access = DashboardAccess(
            token: fixed ?? DashboardAccess.newToken(ctx.entropy.bytes(32)),
            csrf: DashboardAccess.newToken(ctx.entropy.bytes(32)), port: port)
        let server = DashboardServer(
            feed: feed, access: access, actions: readOnly ? nil : DashboardActions(ctx: ctx, cluster: options),
            hostName: ctx.hostName)
        let shown = listen == "0.0.0.0" || listen == "::" ? "127.0.0.1" : listen
        let console = ctx.console
        let tokenShown = fixed == nil
        try await server.run(host: listen, port: port) { bound in
            let host = shown.contains(":") ? "[\(shown)]" : shown
            console.out(
                "so dashboard: http://\(host):\(bound)/"
                    + (tokenShown ? "?token=\(access.token)" : " (token: SO_DASHBOARD_TOKEN)"))
            console.out("press Ctrl-C to stop")
        }
    }
}
