import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct UpCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Init, create and start a stack in one step (a workspace named NAME).",
        discussion: """
            The deployment directory is $SO_HOME/deployments/NAME (SO_HOME defaults to ~/.so) and the namespace is NAME. Running it again for an existing NAME \
            starts that deployment again as it is. API keys named by the stack's secret-env and by the agent (for \
            agent-workspace: GITHUB_TOKEN, GIT_TOKEN, and \
            the agent's own, e.g. ANTHROPIC_API_KEY for claude) are copied from your environment into the deployment's Secret at start, never to disk.

            A workspace started inside a git checkout without GIT_REPO works on that checkout: the branch agent/NAME starts at its HEAD, its history (local \
            commits included) goes in as a git bundle over the Kubernetes API, and its origin becomes the workspace's \
            origin. --include-uncommitted carries the \
            working tree's changes too; --from DIR names another checkout. --agent chooses the agent CLI from the stack's agents: table (agent-workspace: \
            claude, codex, gemini, aider; default claude).

            Example:
              cd ~/src/web && so up agent-workspace --name fix-login --include-uncommitted
              so up agent-workspace --name fix-login --agent codex --from ~/src/web
              so up agent-workspace --name fix-login --config GIT_REPO=https://github.com/acme/web --config GIT_REF=main
              so up agent-workspace --name ci-1234 --with postgres --ttl 2h -o json
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: ArgumentHelp("Stack: a built-in name or a path.", valueName: "stack")) var stackArgument: String
    @Option(name: .long, help: ArgumentHelp("Workspace name (namespace); default STACK-xxxx.", valueName: "name"))
    var name: String?
    @Option(
        name: .long, parsing: .singleValue, help: ArgumentHelp("Config value KEY=VALUE (repeatable).", valueName: "K=V")
    ) var config: [String] = []
    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp("Optional pods to include, e.g. postgres,redis.", valueName: "pods")) var with: [String] = []
    @Option(
        name: .long,
        help: ArgumentHelp("Expire this long after the start (for 'so cleanup --expired').", valueName: "duration"))
    var ttl: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A workspace unused this long (no task, shell or exec) is stopped by 'so cleanup --idle', its volume kept.",
            valueName: "duration"))
    var idle: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Claim a workspace from this warm pool ('so pool'); default: one that fits.", valueName: "pool"))
    var pool: String?
    @Flag(name: .long, help: "Start cold: never claim from a warm pool.") var noPool = false
    @Option(
        name: .long, help: ArgumentHelp("Route NAME.localhost to the service exposing this port.", valueName: "port"))
    var preview: Int?
    @Flag(name: .long, help: "Return after applying, without waiting.") var noWait = false
    @Flag(name: .long, help: "Do not create kind clusters or load images.") var skipClusterManagement = false
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait for the deployment to be ready.", valueName: "seconds"),
        transform: Seconds.parse) var timeout: Double = 300
    @Option(name: .long, help: "Progress output: auto, plain or json.") var progress: ProgressMode = .auto
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    /// --dry-run: Write nothing, change nothing: print what would be created, with the API server's server-side dry run of every object.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A workspace: start from this git checkout (default: the one you are in, when GIT_REPO is not set).",
            valueName: "dir")) var from: String?
    @Flag(
        name: .long,
        help:
            "A workspace: carry the checkout's uncommitted changes in too (untracked files included, ignored ones not)."
    )
    var includeUncommitted = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A workspace: the agent CLI, from the stack's agents: table (claude, codex, gemini, aider, or one a spec adds).",
            valueName: "name")) var agent: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        var ctx = global.context(ctx, root: rootOption, dryRun: dryRun)
        if output == .json { ctx.options.quiet = true }
        var req = UpRequest(stack: stackArgument)
        req.dryRun = dryRun
        req.name = name
        req.config = config
        req.with = with.isEmpty ? nil : with
        req.ttl = try ttl.map(parseTTL)
        req.preview = preview
        req.wait = !noWait
        req.timeout = timeout
        req.progress = progress
        req.cluster = cluster.options(manage: !skipClusterManagement)
        req.from = from
        req.includeUncommitted = includeUncommitted
        req.agent = agent
        req.pool = pool
        req.noPool = noPool
        req.idle = try idle.map { text in
            _ = try parseTTL(text)
            return text
        }
        let r = try await UpAction(ctx).run(req)
        if dryRun {
            if output == .json {
                ctx.console.out(JSONOut.encode(r.plan))
                return
            }
            for p in r.plan { ctx.console.out(p.line) }
            ctx.say("dry run: nothing was written or changed")
            return
        }
        if output == .json {
            ctx.console.out(
                JSONOut.encode(
                    UpJSON(
                        name: r.name, namespace: r.namespace, directory: r.directory, created: r.created,
                        ready: r.ready,
                        source: r.source)))
            return
        }
        ctx.console.out("\(r.name) is \(r.ready ? "ready" : "applied") in namespace \(r.namespace) (\(r.directory))")
        ctx.console.out("  shell:  so deployment --name \(r.name) shell")
        ctx.console.out("  exec:   so deployment --name \(r.name) exec SERVICE -- CMD")
        if r.workspace {
            ctx.console.out("  task:   so deployment --name \(r.name) task \"TEXT\" [--pr]")
            ctx.console.out("  work:   so deployment --name \(r.name) log | diff | apply | merge | push | fetch")
            ctx.console.out("  remove: so down \(r.name) [--keep | --merge | --discard]")
        } else {
            ctx.console.out("  remove: so down \(r.name)")
        }
    }
}
