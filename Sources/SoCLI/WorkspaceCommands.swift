import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

/// `--ttl 2h` and friends.
func parseTTL(_ text: String) throws -> Double {
    guard let s = DurationText.seconds(text), s > 0 else {
        throw SoError.usage("'\(text)' is not a duration", hint: "write e.g. 90m, 4h or 2d")
    }
    return s
}

/// `--timeout SECONDS`: a positive number (read even when it starts with '-', so '-5' is named as invalid).
enum Seconds {
    static func parse(_ text: String) throws -> Double {
        guard let s = Double(text), s.isFinite, s > 0 else { throw ValidationError("not a positive number of seconds") }
        return s
    }
}

struct UpCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Init, create and start a stack in one step (a workspace named NAME).",
        discussion: """
        The deployment directory is $SO_HOME/deployments/NAME (SO_HOME defaults to ~/.so) and the namespace is NAME. Running it again for an existing NAME \
        starts that deployment again as it is. API keys named by the stack's secret-env and by the agent (for agent-workspace: GITHUB_TOKEN, GIT_TOKEN, and \
        the agent's own, e.g. ANTHROPIC_API_KEY for claude) are copied from your environment into the deployment's Secret at start, never to disk.

        A workspace started inside a git checkout without GIT_REPO works on that checkout: the branch agent/NAME starts at its HEAD, its history (local \
        commits included) goes in as a git bundle over the Kubernetes API, and its origin becomes the workspace's origin. --include-uncommitted carries the \
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
    @Option(name: .long, help: ArgumentHelp("Workspace name (namespace); default STACK-xxxx.", valueName: "name")) var name: String?
    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Config value KEY=VALUE (repeatable).", valueName: "K=V")) var config: [String] = []
    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Optional pods to include, e.g. postgres,redis.", valueName: "pods")) var with: [String] = []
    @Option(name: .long, help: ArgumentHelp("Expire this long after the start (for 'so cleanup --expired').", valueName: "duration")) var ttl: String?
    @Option(name: .long, help: ArgumentHelp("Route NAME.localhost to the service exposing this port.", valueName: "port")) var preview: Int?
    @Flag(name: .long, help: "Return after applying, without waiting.") var noWait = false
    @Flag(name: .long, help: "Do not create kind clusters or load images.") var skipClusterManagement = false
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds to wait for the deployment to be ready.", valueName: "seconds"),
        transform: Seconds.parse) var timeout: Double = 300
    @Option(name: .long, help: "Progress output: auto, plain or json.") var progress: ProgressMode = .auto
    @Option(name: .shortAndLong, help: "Output format: text or json.") var output: OutputFormat = .text
    /// --dry-run: Write nothing, change nothing: print what would be created, with the API server's server-side dry run of every object.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Option(name: .long, help: ArgumentHelp("A workspace: start from this git checkout (default: the one you are in, when GIT_REPO is not set).",
        valueName: "dir")) var from: String?
    @Flag(name: .long, help: "A workspace: carry the checkout's uncommitted changes in too (untracked files included, ignored ones not).")
    var includeUncommitted = false
    @Option(name: .long, help: ArgumentHelp("A workspace: the agent CLI, from the stack's agents: table (claude, codex, gemini, aider, or one a spec adds).",
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
        let r = try await UpAction(ctx).run(req)
        if dryRun {
            if output == .json { ctx.console.out(JSONOut.encode(r.plan)); return }
            for p in r.plan { ctx.console.out(p.line) }
            ctx.say("dry run: nothing was written or changed")
            return
        }
        if output == .json {
            ctx.console.out(JSONOut.encode(UpJSON(name: r.name, namespace: r.namespace, directory: r.directory, created: r.created, ready: r.ready,
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

struct DownCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "down",
        abstract: "Remove a deployment 'so up' made: objects, volumes, namespace and directory.",
        discussion: """
        Safe to repeat: a deployment already gone exits 0. When its directory is gone, the namespace is found on the cluster by name.

        A workspace (agent-workspace) is read first: commits neither pushed nor fetched and uncommitted changes would be lost with its volume. --keep \
        leaves its branch (agent/NAME, with what it left uncommitted committed) in the local repository, --merge merges that branch into the current \
        branch, --discard throws the work away. Without one of them down asks on a terminal, and refuses, naming the work, without one. A workspace that is \
        not running cannot be read and is refused the same way (--discard removes it).

        Example:
          so down fix-login
          so down fix-login --keep
          so down fix-login --merge --into ~/src/web
          so down fix-login --discard
        """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "Name given to 'so up'.") var name: String
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds to wait for objects to go.", valueName: "seconds"),
        transform: Seconds.parse) var timeout: Double = 120
    @Flag(name: [.long, .customLong("force")], help: "Remove a workspace even when it holds work that is not pushed (alias --force).") var discard = false
    /// --dry-run: Change nothing; list what would be removed.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(name: .long, help: "A workspace: leave its branch in the local repository first.") var keep = false
    @Flag(name: .long, help: "A workspace: merge its branch into the local repository's current branch first.") var merge = false
    @Option(name: .long, help: ArgumentHelp("The local repository for --keep and --merge (default: the one the current directory is in).",
        valueName: "dir")) var into: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func validate() throws {
        if [discard, keep, merge].filter({ $0 }).count > 1 { throw ValidationError("--keep, --merge and --discard contradict each other: give one") }
        if into != nil && !(keep || merge) { throw ValidationError("--into names the repository for --keep or --merge") }
    }

    func run(_ ctx: SoContext) async throws {
        var req = DownRequest(name: name)
        req.dryRun = dryRun
        req.discard = discard
        req.choice = keep ? .keep : merge ? .merge : discard ? .discard : nil
        req.into = into
        req.timeout = timeout
        req.cluster = cluster.options(manage: false)
        try await DownAction(global.context(ctx)).run(req)
    }
}

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
    @Option(name: .long, help: ArgumentHelp("Deployments created longer ago than this.", valueName: "duration")) var olderThan: String?
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
        if output == .json { ctx.console.out(JSONOut.encode(rows.map(ListingJSON.init))); return }
        if rows.isEmpty { ctx.console.out("no so deployments on this cluster"); return }
        let now = ctx.clock.now()
        let table = [["NAME", "STACK", "NAMESPACE", "AGE", "READY", "EXPIRES", "DIRECTORY"]] + rows.map { r in
            [r.name, r.stack, r.namespace,
             r.createdAt.map { DurationText.short(max(0, Int(now.timeIntervalSince($0)))) } ?? "-",
             r.terminating ? "terminating" : "\(r.readyDeployments)/\(r.deployments)",
             r.expiresAt.map { $0 <= now ? "expired" : "in " + DurationText.short(Int($0.timeIntervalSince(now))) } ?? "-",
             r.host == ctx.hostName || r.host.isEmpty ? r.directory : "\(r.host):\(r.directory)"]
        }
        let widths = (0..<7).map { i in table.map { $0[i].count }.max() ?? 0 }
        for row in table {
            ctx.console.out(row.enumerated().map { i, cell in i == 6 ? cell : cell.padding(toLength: widths[i], withPad: " ",
                startingAt: 0) }.joined(separator: "  "))
        }
    }
}

struct UpJSON: Encodable {
    var name, namespace, directory: String
    var created, ready: Bool
    /// The local checkout a workspace started from.
    var source: WorkspaceSource?
}

/// The JSON shape of a listed deployment.
struct ListingJSON: Encodable {
    var name, stack, namespace, id, directory, host: String
    var created: String?
    var expires: String?
    var ready: Bool
    var readyDeployments, deployments: Int
    var terminating: Bool

    init(_ r: DeploymentListing) {
        name = r.name; stack = r.stack; namespace = r.namespace; id = r.id; directory = r.directory; host = r.host
        created = r.createdAt.map(Timestamps.rfc3339)
        expires = r.expiresAt.map(Timestamps.rfc3339)
        ready = r.ready; readyDeployments = r.readyDeployments; deployments = r.deployments; terminating = r.terminating
    }
}

struct DeploymentShellCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Open an interactive shell in a service's container (in /workspace when it exists).",
        discussion: """
        Uses kubectl. The service defaults to the first service of the stack's first pod (agent, for agent-workspace).

        Example:
          so deployment --name fix-login shell
          so deployment --dir deployments/example shell web
        """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Service (container) name.") var service: String?

    func run(_ ctx: SoContext) async throws {
        let code = try await ObserveAction(target.context(ctx)).shell(target.dir(ctx), cluster: target.options(manage: false), service: service)
        if code != 0 { throw ExitCode(code) }
    }
}
