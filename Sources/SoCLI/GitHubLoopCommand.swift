import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoGitHub
import SoWorkspace

struct GitHubLoopCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "loop",
        abstract: "Turn the inbox's pending deliveries into workspaces and tasks, as the loop's config says.",
        discussion: """
            Each pass reads the pending deliveries, oldest first, and the loop's threads (a ConfigMap per issue in \
            so-github), plans them, and for each step marks its deliveries taken (a delivery another loop took is \
            skipped), then acts: a labeled issue gets a workspace ('so up' of the config's stack, the repository as \
            GIT_REPO) and a detached task of its title and body (--issue, --pr), a trusted '/so' comment or a review \
            asking for changes the next task (comments that came together: one task), an outsider's command one \
            reply, a closed pull request 'so down' of its workspace (refused, not discarded, when its work is not \
            pushed). It reacts with eyes to what it took and comments on the issue; then saves the thread and marks \
            the deliveries done or failed. One line per step; no title, body, comment or token is printed. Needs \
            GITHUB_TOKEN or GH_TOKEN (issues and pull requests: write), or a GitHub App: GITHUB_APP_ID and \
            GITHUB_APP_PRIVATE_KEY (or GITHUB_APP_PRIVATE_KEY_FILE), GITHUB_APP_INSTALLATION_ID optional; the \
            installation's token, renewed before it ends, is handed to the workspaces, so their pushes run the \
            repository's workflows. Without --once, a pass every --interval.

            Example:
              so github loop --config loop.yml --once
              so github loop --config loop.yml --interval 30
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Option(
        name: .long, help: ArgumentHelp("The loop's config (YAML: repositories, label, stack, …).", valueName: "file"))
    var config: String
    @Flag(name: .long, help: "One pass, then exit.") var once = false
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Seconds between passes (without --once).", valueName: "seconds"),
        transform: Seconds.parse) var interval: Double = 30
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        HeapArenas.limit(environment: ctx.environment)
        let loopConfig = try GitHubLoopConfig.load(config, fs: ctx.fs)
        let options = cluster.options(manage: false)
        let target = try await ClusterTargets(ctx: ctx).shared(options)
        let console = ctx.console
        var app: GitHubAppTokens?
        if let a = try GitHubApp.fromEnvironment(ctx.environment, fs: ctx.fs) {
            app = try GitHubAppTokens(app: a, repositories: loopConfig.repositories)
            console.err(
                "github: acting as the GitHub App \(a.id) (installation \(a.installation.map(String.init) ?? "looked up")), "
                    + "with a token renewed before each ends; GITHUB_TOKEN, GH_TOKEN and GIT_TOKEN are not used")
        }
        // The workspaces get no GitHub token: the loop pushes their work (issue 64).
        let live = GitHubLoopLive(
            ctx: ctx, client: try ctx.connect(target.connection), config: loopConfig, cluster: options, app: app)
        let executor = GitHubLoopExecutor(effects: live, config: loopConfig) { console.out($0) }
        if once { return try await executor.pass(now: ctx.clock.now()) }
        while true {
            do { try await executor.pass(now: ctx.clock.now()) } catch let e as SoError {
                console.err("github: the pass failed: \(e.message)" + (e.hint.map { "; hint: \($0)" } ?? ""))
            }
            try await ctx.clock.sleep(seconds: interval)
        }
    }
}
