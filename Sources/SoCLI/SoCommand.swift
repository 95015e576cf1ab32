import ArgumentParser
import Foundation
import Logging
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoKubeHTTP
import SoStack
import SoSystem
import SoWorkspace

/// The root command. Commands are thin: parse, build the context, call one action, print.
public struct SoCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "so",
        abstract: "Deploy stacks of compose files onto Kubernetes (a shared kind cluster, or any cluster).",
        discussion: """
            A stack is a stack.yml naming compose files (pods). 'deploy init' writes a spec of per-deployment overrides, \
            'deploy create' turns it into a deployment directory. A group's options (these, deploy's --deploy-to, deployment's \
            --dir, --name, -o …) may come before or after its subcommand, as with laconic-so.

            Example:
              so --stack example deploy init --output example-spec.yml
              so deploy create --spec-file example-spec.yml --deployment-dir deployments/example
              so up agent-workspace --name fix-login --config GIT_REPO=https://github.com/acme/web
            """,
        version: SoVersion.current,
        groupedSubcommands: [
            CommandGroup(name: "Deploy", subcommands: [DeployCommand.self, DeploymentCommand.self]),
            CommandGroup(
                name: "Workspaces",
                subcommands: [UpCommand.self, DownCommand.self, CleanupCommand.self, PoolCommand.self]),
            CommandGroup(
                name: "Stacks",
                subcommands: [
                    StackCommand.self, FetchStackCommand.self, SetupRepositoriesCommand.self,
                    BuildContainersCommand.self,
                ]),
            CommandGroup(
                name: "Other",
                subcommands: [DashboardCommand.self, GitHubCommand.self, VersionCommand.self, CompletionCommand.self]),
        ]
    )
    // laconic-so's global options, declared here so that ArgumentParser reads them before or after any subcommand; a
    // verb that reads one declares the same option group and gets this value (`StackOption`, `RootOption`, `GlobalOptions`).
    @OptionGroup var stackOption: StackOption
    @OptionGroup var rootOption: RootOption
    @OptionGroup var global: GlobalOptions
    /// laconic-so's global `--dry-run` (`so --dry-run deploy create …`): read here, before or after the verb, and
    /// shared with each verb that declares it; a verb that does not take it refuses it (`SoRunnable.takes`).
    @OptionGroup var dry: DryRunFlag

    public init() {}

    /// The options of `so` itself the line gave that a verb may not take.
    var given: [GroupOption] { dry.dryRun ? [.dryRun] : [] }
}

extension SoContext {
    /// Real file system, processes, clock, CSPRNG and terminal.
    public static func live(arguments0: String = CommandLine.arguments.first ?? "so") -> SoContext {
        let fs = LocalFileSystem()
        let env = ProcessInfo.processInfo.environment
        let exe = fs.realpath("/proc/self/exe")
        // The executable's real path (/proc/self/exe): `<prefix>/bin/so` finds `<prefix>/share/so` however it was called.
        let lookup = StackLocator.lookUpBuiltInRoot(
            explicit: nil, environment: env, executable: fs.exists(exe) ? exe : arguments0, fs: fs)
        _ = StderrLogHandler.origin
        let local = LocalProcessRunner(
            installHints: [
                "git": "install git (apt-get install git)",
                "kind": "install kind: https://kind.sigs.k8s.io/docs/user/quick-start/#installation",
                "kubectl": "install kubectl: https://kubernetes.io/docs/tasks/tools/",
                "docker": "install Docker Engine: https://docs.docker.com/engine/install/",
            ], environment: env)
        let processes: ProcessRunner =
            env["SO_TRACE_API"].map { !$0.isEmpty && $0 != "0" } == true
            ? TracingProcessRunner(inner: local, logger: Tracing.logger("so.proc", environment: env)) : local
        // Exec credential plugins run through the same process seam, with this environment and terminal.
        let credentials = CredentialEffects(
            processes: processes, fs: fs, environment: env, stdinIsTerminal: isatty(0) == 1, clock: SystemClock())
        var ctx = SoContext(
            fs: fs, processes: processes, clock: SystemClock(), entropy: SystemEntropy(), console: StandardConsole(),
            environment: env,
            builtInRoot: lookup.root,
            connect: { connection in
                try LiveClients.shared.client(for: connection) {
                    let client = try HTTPClusterClient(connection, effects: credentials)
                    client.logger = Tracing.logger("so.api", environment: env)
                    Tracing.logger("so.phase", environment: env).debug("API client made")
                    return client
                }
            })
        ctx.builtInSearched = lookup.searched
        ctx.resolver =
            env["SO_TRACE_API"].map { !$0.isEmpty && $0 != "0" } == true
            ? TracingResolver(inner: SystemResolver(), logger: Tracing.logger("so.dns", environment: env))
            : SystemResolver()
        ctx.hostLocks = FileHostLocks()
        ctx.web = LiveWebClient()
        ctx.hostName = ProcessInfo.processInfo.hostName
        ctx.isProcessAlive = { pid in kill(pid, 0) == 0 || errno == EPERM }
        if fs.exists(exe) { ctx.selfExecutable = exe }
        if env["SO_TRACE_API"].map({ !$0.isEmpty && $0 != "0" }) == true {
            let log = Tracing.logger("so.phase", environment: env)
            ctx.phase = { log.debug("\($0)") }
            ctx.phase("context made")
        }
        return ctx
    }
}
