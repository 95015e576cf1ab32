import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics
import SoRender

struct DeploymentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deployment",
        abstract: "Run and inspect a deployment directory (--dir D).",
        discussion: """
        Example:
          so deployment --dir deployments/example start
          so deployment --dir deployments/example status
          so deployment --dir deployments/example logs --tail 20 -f
          so deployment --name ws-1 shell
          so deployment --name ws-1 task "make the login test pass" --pr
          so deployment list
        """,
        subcommands: [DeploymentListCommand.self, DeploymentShellCommand.self, DeploymentStartCommand.self, DeploymentUpCommand.self,
            DeploymentStopCommand.self, DeploymentStatusCommand.self,
                      DeploymentPsCommand.self, DeploymentLogsCommand.self, DeploymentExecCommand.self, DeploymentPortForwardCommand.self,
                          DeploymentRestartCommand.self, DeploymentUpdateEnvsCommand.self,
                      DeploymentRotateSecretsCommand.self, DeploymentRenderCommand.self,
                      DeploymentTaskCommand.self, DeploymentDiffCommand.self, DeploymentPushCommand.self, DeploymentFetchCommand.self,
                      DeploymentLogCommand.self, DeploymentApplyCommand.self, DeploymentMergeCommand.self]
    )

    // The group's options (they parse before or after the verb: `so deployment --dir D status`, `so deployment status
    // --dir D`); a verb that takes one declares the same option group and reads this value.
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var cluster: ClusterFlags
    @OptionGroup var format: FormatOption
    @OptionGroup var seconds: TimeoutOption

    var given: [GroupOption] { deployment.given + cluster.given + format.given + seconds.given }
}

/// Options of the `deployment` group: a directory, or the name of one `so up` made.
struct DeploymentOptions: GroupOptionSet {
    @Option(name: .long, help: ArgumentHelp("Deployment directory made by 'so deploy create'.", valueName: "dir"))
    var dir: String?
    @Option(name: .long, help: ArgumentHelp("Name given to 'so up' (the directory $SO_HOME/deployments/NAME).", valueName: "name"))
    var name: String?

    var given: [GroupOption] { (dir == nil ? [] : [.dir]) + (name == nil ? [] : [.name]) }

    func validate() throws {
        if dir != nil && name != nil { throw ValidationError("give either --dir or --name, not both") }
    }

    /// For the verbs that act on one deployment (the group parses these options for `list` too, which takes neither).
    func requireOne() throws {
        if dir == nil && name == nil { throw ValidationError("give --dir DIR (a deployment directory) or --name NAME (one 'so up' made)") }
    }

    func directory(_ ctx: SoContext) throws -> String { try dir ?? ctx.namedDeployment(name ?? "") }
}

/// What every cluster verb takes: global options, the deployment directory, how to reach the cluster.
struct DeploymentTarget: ParsableArguments {
    /// The group options a verb holding this takes, besides those it declares itself (-o, --timeout, --dry-run).
    static let takes: Set<GroupOption> = [.dir, .name, .kubeconfig, .context]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var cluster: ClusterFlags
    /// The group and `so`, which parsed their options: what the line gave (`given`).
    @ParentCommand var group: DeploymentCommand
    @ParentCommand var so: SoCommand

    func validate() throws { try deployment.requireOne() }

    var given: [GroupOption] { group.given + so.given }
    func dir(_ ctx: SoContext) throws -> String { try deployment.directory(ctx) }
    func context(_ ctx: SoContext, root: RootOption? = nil) -> SoContext { global.context(ctx, root: root) }
    func options(manage: Bool = false) -> ClusterOptions { cluster.options(manage: manage) }
}

/// How the verbs reach the cluster (options of the `deployment` group; `up`, `down` and `cleanup` take them too).
struct ClusterFlags: GroupOptionSet {
    @Option(name: .long, help: ArgumentHelp("Kubeconfig to use instead of the deployment's cluster.", valueName: "file")) var kubeconfig: String?
    @Option(name: .long, help: ArgumentHelp("Kubeconfig context to use.", valueName: "name")) var context: String?

    var given: [GroupOption] { (kubeconfig == nil ? [] : [.kubeconfig]) + (context == nil ? [] : [.context]) }

    func options(manage: Bool) -> ClusterOptions { ClusterOptions(kubeconfig: kubeconfig, context: context, performClusterManagement: manage) }
}

extension ProgressMode: ExpressibleByArgument {}

/// Options of `start` and its alias `up` (one set, one default: cluster management on).
struct StartOptions: ParsableArguments {
    static let takes = DeploymentTarget.takes.union([.timeout, .dryRun])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    @Flag(name: .long, help: "Create the kind cluster if needed and load images (default).") var performClusterManagement = false
    @Flag(name: .long, help: "Do not create kind clusters or load images.") var skipClusterManagement = false
    @Flag(name: .long, help: "Return after applying, without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }
    @Option(name: .long, help: "Progress output: auto, plain or json.") var progress: ProgressMode = .auto
    @Option(name: .long, help: ArgumentHelp("Expire this long after the start (for 'so cleanup --expired'), e.g. 2h.", valueName: "duration")) var ttl: String?
    /// --dry-run: Change nothing: the API server checks every object (server-side dry run) and the plan is printed.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(name: .long, help: "With --dry-run: show each field that would change, as kubectl diff does (never a Secret's values).") var diff = false
    @Flag(name: .long, help: ArgumentHelp("With --dry-run: exit 2 when the plan would change something, 0 when every object is unchanged "
                                          + "(1 stays an error), as terraform plan -detailed-exitcode; for drift checks in CI.")) var detailedExitcode = false

    func validate() throws {
        if diff && !dryRun { throw ValidationError("--diff goes with --dry-run (start --dry-run --diff)") }
        if detailedExitcode && !dryRun { throw ValidationError("--detailed-exitcode goes with --dry-run (start --dry-run --detailed-exitcode)") }
        if performClusterManagement && skipClusterManagement {
            throw ValidationError("--perform-cluster-management and --skip-cluster-management contradict each other")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx, root: rootOption)
        if dryRun {
            let plan = try await StartAction(ctx).run(StartRequest(directory: target.dir(ctx), cluster: target.options(manage: !skipClusterManagement),
                                                                   progress: progress, ttl: try ttl.map(parseTTL), dryRun: true, diff: diff)).plan
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
        try await StartAction(ctx).run(StartRequest(directory: target.dir(ctx), cluster: target.options(manage: !skipClusterManagement),
                                                 wait: !noWait, timeout: timeout, progress: progress, ttl: try ttl.map(parseTTL)))
    }
}

struct DeploymentStartCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Apply the deployment to its cluster and wait until it runs.",
        discussion: """
        kind: reuses the host's kind cluster, creating it from kind-config.yml when none exists, and loads the stack's locally built images into it \
        (cluster management is on by default for both start and up; --skip-cluster-management turns it off). Objects are applied with server-side apply in \
        order (Namespace, Secrets, ConfigMaps, volumes, Services, Deployments, Jobs once, Ingress), objects that left the deployment are pruned, then start \
        waits for Deployments to be available and Jobs to complete. Generated secrets are made once and kept.

        Example:
          so deployment --dir deployments/example start
          so deployment --dir deployments/example start --no-wait --progress json
          so deployment --dir deployments/prod start --kubeconfig ~/.kube/prod --context prod
        """
    )
    static let takes = StartOptions.takes
    @OptionGroup var options: StartOptions
    var given: [GroupOption] { options.target.given }
    func run(_ ctx: SoContext) async throws { try await options.run(ctx) }
}

struct DeploymentUpCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Same as start (laconic-so's alias, with the same defaults).",
        discussion: """
        Example:
          so deployment --dir deployments/example up
        """
    )
    static let takes = StartOptions.takes
    @OptionGroup var options: StartOptions
    var given: [GroupOption] { options.target.given }
    func run(_ ctx: SoContext) async throws { try await options.run(ctx) }
}

struct DeploymentStopCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Delete the deployment's objects; keep volumes, secrets and namespace unless asked.",
        discussion: """
        Returns when the objects are gone. --delete-volumes also removes claims, volumes and the generated secrets; --delete-namespace removes the \
        namespace; --perform-cluster-management deletes the kind cluster.

        A workspace (agent-workspace) is read before its volume goes: while its checkout holds commits neither pushed nor fetched, or uncommitted changes, \
        --delete-volumes refuses, naming them, unless --discard (as 'so down').

        Example:
          so deployment --dir deployments/example stop
          so deployment --dir deployments/example stop --delete-volumes --delete-namespace
        """,
        aliases: ["down"]
    )
    static let takes = DeploymentTarget.takes.union([.timeout, .dryRun])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "Also delete volumes (PVCs, PVs) and generated secrets.") var deleteVolumes = false
    @Flag(name: .long, help: "Keep volumes (default).") var preserveVolumes = false
    @Flag(name: .long, help: "Also delete the namespace.") var deleteNamespace = false
    @Flag(name: .long, help: "Also delete the kind cluster.") var performClusterManagement = false
    @Flag(name: .long, help: "Leave the kind cluster alone (default).") var skipClusterManagement = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 120 }
    /// --dry-run: Change nothing; list what would be deleted.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(name: .long, help: "With --delete-volumes: delete a workspace's volume even when it holds work that is not pushed.") var discard = false

    func validate() throws {
        if discard && !deleteVolumes { throw ValidationError("--discard goes with --delete-volumes (only the volume holds a workspace's work)") }
        if deleteVolumes && preserveVolumes { throw ValidationError("--delete-volumes and --preserve-volumes contradict each other") }
        if performClusterManagement && skipClusterManagement {
            throw ValidationError("--perform-cluster-management and --skip-cluster-management contradict each other")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let (context, dir) = (target.context(ctx), try target.dir(ctx))
        let cluster = target.options(manage: performClusterManagement && !skipClusterManagement)
        try await StopAction(context).run(StopRequest(directory: dir, cluster: cluster, deleteVolumes: deleteVolumes, deleteNamespace: deleteNamespace,
                                                      timeout: timeout, dryRun: dryRun, discard: discard,
                                                      volumeGuard: WorkGuard.stop(context, directory: dir, cluster: cluster)))
    }
}

struct DeploymentStatusCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show workloads, ingress hosts and pods of the deployment.",
        discussion: """
        Example:
          so deployment --dir deployments/example status
          so deployment --dir deployments/example status -o json
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await ObserveAction(ctx).status(target.dir(ctx), cluster: target.options(manage: false))
        } text: { s in
            var lines = ["deployment \(s.deployment) in namespace \(s.namespace) (\(s.cluster)): \(s.ready ? "ready" : "not ready")"]
            lines += s.workloads.map { w in "  \(w.kind) \(w.name): \(w.state)" }
            lines += s.ingressHosts.map { h in "  ingress: http://\(h)/" }
            for p in s.pods {
                lines.append("  pod \(p.name): \(p.phase) \(p.ready) ready, \(p.restarts) restarts" + (p.node.isEmpty ? "" : ", node \(p.node)")
                    + (p.ageSeconds.map { ", age \(DurationText.short($0))" } ?? ""))
            }
            return lines + s.warnings.map { w in "  warning: \(w)" }
        }
    }
}

struct DeploymentPsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "ps",
        abstract: "List the deployment's pods with phase, readiness and ports.",
        discussion: """
        Example:
          so deployment --dir deployments/example ps
          so deployment --dir deployments/example ps -o json
        """
    )
    static let takes = DeploymentTarget.takes.union([.format])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @OptionGroup var format: Formatted<OutputFormat>
    var output: OutputFormat { format.value }

    func run(_ ctx: SoContext) async throws {
        try await output.report(target.context(ctx)) { ctx in
            try await ObserveAction(ctx).ps(target.dir(ctx), cluster: target.options(manage: false))
        } text: { pods in
            if pods.isEmpty { return ["no pods"] }
            let w = max(4, pods.map(\.name.count).max() ?? 0)
            var lines = ["NAME".padding(toLength: w + 2, withPad: " ", startingAt: 0) + "PHASE              READY  RESTARTS  AGE    IP               PORTS"]
            for p in pods {
                lines.append(p.name.padding(toLength: w + 2, withPad: " ", startingAt: 0) + p.phase.padding(toLength: 19, withPad: " ", startingAt: 0)
                             + p.ready.padding(toLength: 7, withPad: " ", startingAt: 0) + String(p.restarts).padding(toLength: 10, withPad: " ", startingAt: 0)
                             + (p.ageSeconds.map(DurationText.short) ?? "-").padding(toLength: 7, withPad: " ", startingAt: 0)
                             + p.ip.padding(toLength: 17, withPad: " ", startingAt: 0) + p.ports.joined(separator: ","))
            }
            return lines
        }
    }
}

struct DeploymentLogsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print the logs of every pod and container (or of the named services).",
        discussion: """
        Example:
          so deployment --dir deployments/example logs
          so deployment --dir deployments/example logs web --tail 50 -f
        """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Services (containers) to show; all when none.") var services: [String] = []
    @Option(name: [.customShort("n"), .long], help: "Lines from the end of each log.") var tail: Int?
    @Flag(name: .shortAndLong, help: "Keep streaming.") var follow = false
    @Option(name: .long, help: ArgumentHelp("Only newer lines, e.g. 10m or 1h.", valueName: "duration")) var since: String?
    @Flag(name: .long, help: "Prefix each line with its timestamp.") var timestamps = false

    func run(_ ctx: SoContext) async throws {
        var seconds: Int?
        if let since {
            guard let s = DurationText.seconds(since).map({ Int($0.rounded(.up)) }) else { throw SoError.usage("--since '\(since)' is not a duration",
                hint: "write e.g. 30s, 10m or 2h") }
            seconds = s
        }
        try await ObserveAction(target.context(ctx)).logs(.init(directory: target.dir(ctx), cluster: target.options(manage: false), services: services,
                                                            tail: tail, follow: follow, sinceSeconds: seconds, timestamps: timestamps))
    }
}


struct DeploymentExecCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command in a service's container; exits with the command's exit code.",
        discussion: """
        Uses kubectl against the deployment's cluster.

        Example:
          so deployment --dir deployments/example exec web -- nginx -t
          so deployment --dir deployments/example exec -it web -- sh
        """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .customShort("i"), help: "Pass stdin.") var interactive = false
    @Flag(name: .customShort("t"), help: "Allocate a terminal.") var tty = false
    @Argument(help: "Service (container) name.") var service: String
    // Options of so (--kubeconfig, --name …) may stand anywhere before --; everything after it is the command's.
    @Argument(help: ArgumentHelp("Command and arguments; write them after -- when they hold options (-x).", valueName: "command")) var command: [String] = []

    func run(_ ctx: SoContext) async throws {
        let cmd = command
        let code = try await ObserveAction(target.context(ctx)).exec(target.dir(ctx), cluster: target.options(manage: false), service: service,
                                                                  command: cmd, interactive: interactive, tty: tty)
        if code != 0 { throw ExitCode(code) }
    }
}

struct DeploymentPortForwardCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "port-forward",
        abstract: "Forward local ports to a service (through kubectl) until interrupted.",
        discussion: """
        Example:
          so deployment --dir deployments/example port-forward web 8080:80
        """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Service name.") var service: String
    @Argument(help: ArgumentHelp("Ports, [LOCAL:]REMOTE.", valueName: "ports")) var ports: [String]

    func run(_ ctx: SoContext) async throws {
        let code = try await ObserveAction(target.context(ctx)).portForward(target.dir(ctx), cluster: target.options(manage: false), service: service,
                                                                         ports: ports)
        if code != 0 { throw ExitCode(code) }
    }
}

struct DeploymentRestartCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "restart",
        abstract: "Refresh the deployment from its stack and spec, re-apply, and restart its pods.",
        discussion: """
        As laconic-so's restart: the deployment directory is updated from its own spec.yml and the stack source (deployment.yml and data/ kept, .bak of \
        changed files), applied, and its pods rolled. --pull first pulls the stack source when it is in a git repository (a source that is not is used as \
        it is). --no-sync only rolls the pods.

        Example:
          so deployment --dir deployments/example restart
          so deployment --dir deployments/example restart --pull
          so deployment --dir deployments/example restart --no-sync
        """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "git pull the stack source first.") var pull = false
    @Flag(name: .long, help: "Only roll the pods; do not refresh or re-apply.") var noSync = false
    @Flag(name: .long, help: "Return without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx, root: rootOption)
        if noSync {
            try await ObserveAction(ctx).restart(target.dir(ctx), cluster: target.options(), wait: !noWait, timeout: timeout)
        } else {
            try await ResyncAction(ctx).run(directory: target.dir(ctx), cluster: target.options(), pull: pull, wait: !noWait, timeout: timeout)
        }
    }
}

struct DeploymentUpdateEnvsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "update-envs",
        abstract: "Re-apply the Deployments' environment from config.env and the compose files, and wait.",
        discussion: """
        Only Deployments are applied (each container gets its own environment; pods roll where it changed). Nothing is pruned.

        Example:
          so deployment --dir deployments/example update-envs
        """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "Return without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        try await StartAction(target.context(ctx, root: rootOption)).run(StartRequest(directory: target.dir(ctx), cluster: target.options(), wait: !noWait,
                                                                                     timeout: timeout, progress: .plain, onlyKinds: ["Deployment"]))
    }
}

struct DeploymentRotateSecretsCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "rotate-secrets",
        abstract: "Make new values for generated secrets (all, or the named keys) and restart.",
        discussion: """
        Example:
          so deployment --dir deployments/example rotate-secrets
          so deployment --dir deployments/example rotate-secrets DB_PASSWORD
        """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Argument(help: "Keys to rotate; all generated keys when none.") var keys: [String] = []
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        _ = try await ObserveAction(target.context(ctx, root: rootOption)).rotateSecrets(target.dir(ctx), cluster: target.options(manage: false), keys: keys,
                                                                                         timeout: timeout)
    }
}

struct DeploymentRenderCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the Kubernetes objects start applies, in apply order (no cluster needed).",
        discussion: """
        The output is the same bytes on every run. Generated secret values never appear: the Secret holding them is referenced, and rendered with \
        placeholder values only with --placeholder-secrets.

        --output-dir writes one file per object (NN-kind-name.yaml) and a .so-render index; a later render replaces exactly the files it wrote. A directory \
        holding other files is refused unless --force, and nothing render did not write is ever removed.

        Example:
          so deployment --dir deployments/example render
          so deployment --dir deployments/example render -o json
          so deployment --dir deployments/example render --output-dir deployments/example-k8s
          so deployment --dir deployments/example render --report
        """
    )

    /// Render needs no cluster and does not wait.
    static let takes: Set<GroupOption> = [.dir, .name, .format]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var format: Formatted<ManifestFormat>
    var output: ManifestFormat { format.value }
    @Option(name: .long, help: ArgumentHelp("Directory to write one file per object into (instead of stdout).", valueName: "dir")) var outputDir: String?
    @Flag(name: .long, help: "With --output-dir: write into a directory that holds other files (they are left alone).") var force = false
    @Flag(name: .long, help: "Include the generated-secrets Secret with placeholder values.") var placeholderSecrets = false
    @Flag(name: .long, help: "Instead of manifests, list what each compose key became (mapped, approximated, ignored).") var report = false

    @ParentCommand var group: DeploymentCommand
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { group.given + so.given }

    enum ManifestFormat: String, OutputChoice {
        case yaml, json
        static let byDefault = ManifestFormat.yaml
    }

    func validate() throws { try deployment.requireOne() }

    func run(_ ctx: SoContext) async throws {
        let ctx = global.context(ctx)
        if report {
            let entries = try RenderAction(ctx).report(deployment.directory(ctx))
            ctx.console.out(output == .json ? JSONOut.encode(entries) : MappingReport.text(entries).trimmedNewlines)
            return
        }
        try RenderAction(ctx).run(RenderRequest(directory: deployment.directory(ctx), output: outputDir ?? "-", format: output == .yaml ? .yaml : .json,
                                                placeholderSecrets: placeholderSecrets, force: force))
    }
}
