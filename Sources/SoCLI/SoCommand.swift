import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics
import SoKube
import SoKubeHTTP
import Logging
import SoStack
import SoSystem

public enum SoVersion {
    public static let current = "0.1.0"
}

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
            CommandGroup(name: "Workspaces", subcommands: [UpCommand.self, DownCommand.self, CleanupCommand.self]),
            CommandGroup(name: "Stacks", subcommands: [StackCommand.self, FetchStackCommand.self, SetupRepositoriesCommand.self, BuildContainersCommand.self]),
            CommandGroup(name: "Other", subcommands: [VersionCommand.self, CompletionCommand.self]),
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

/// `--quiet`, `--verbose` (and the hidden `--debug`): options of `so` every verb reads, through the context it runs with.
public struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Print less.") public var quiet = false
    @Flag(name: .long, help: "Print more.") public var verbose = false
    @Flag(name: .long, help: .hidden) public var debug = false

    public init() {}

    /// `ctx` (the context the command line runs with) with these options applied, and `--root` when the verb takes it.
    func context(_ ctx: SoContext, root: RootOption? = nil, dryRun: Bool = false) -> SoContext {
        var ctx = ctx
        ctx.options = GlobalSettings(quiet: quiet, verbose: verbose, dryRun: dryRun, debug: debug)
        if let root = root?.root {
            ctx.builtInRoot = ctx.absolute(root)
            ctx.builtInSearched = ["\(ctx.absolute(root)) (--root)"]
        }
        return ctx
    }
}

/// `--stack`, an option of `so`, on the verbs that read a stack by it (deploy init and create, stack show, build-containers,
/// setup-repositories).
public struct StackOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Stack: a built-in name, or a path to a stack directory.", valueName: "name|path"))
    public var stack: String?

    public init() {}

    func require(_ command: String) throws -> String {
        guard let stack else {
            throw SoError.usage("\(command) needs --stack", hint: "pass --stack NAME (see 'so stack list') or --stack PATH")
        }
        return stack
    }
}

/// `--root`, an option of `so`, on the verbs that look up a built-in stack by name.
public struct RootOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Directory holding the built-in stacks/, compose/, config/ (default: $SO_ROOT, then beside the so binary).",
        valueName: "dir"))
    public var root: String?

    public init() {}
}

/// `--dry-run`, on the commands where it means something: they then change nothing and say what they would do.
/// One option group type for all of them, declared on the root too, so `so --dry-run VERB` reaches the verb.
public struct DryRunFlag: ParsableArguments {
    @Flag(name: .long, help: "Change nothing; print what would be done.") public var dryRun = false
    public init() {}
}

/// A verb of `so`: what `SoCommandLine.execute` runs once the line is parsed, with the context it was given (live wiring
/// in `main`, fakes in tests).
protocol SoRunnable: ParsableCommand {
    /// The options of its group and of `so` (`GroupOption`) this verb reads; another of them given on the line is refused.
    static var takes: Set<GroupOption> { get }
    /// The options of its group and of `so` the line gave, as those commands parsed them (the verb holds them as
    /// `@ParentCommand`).
    var given: [GroupOption] { get }
    func run(_ ctx: SoContext) async throws
}

extension SoContext {
    /// Real file system, processes, clock, CSPRNG and terminal.
    public static func live(arguments0: String = CommandLine.arguments.first ?? "so") -> SoContext {
        let fs = LocalFileSystem()
        let env = ProcessInfo.processInfo.environment
        let exe = fs.realpath("/proc/self/exe")
        // The executable's real path (/proc/self/exe): `<prefix>/bin/so` finds `<prefix>/share/so` however it was called.
        let lookup = StackLocator.lookUpBuiltInRoot(explicit: nil, environment: env, executable: fs.exists(exe) ? exe : arguments0, fs: fs)
        let processes = LocalProcessRunner(installHints: [
            "git": "install git (apt-get install git)",
            "kind": "install kind: https://kind.sigs.k8s.io/docs/user/quick-start/#installation",
            "kubectl": "install kubectl: https://kubernetes.io/docs/tasks/tools/",
            "docker": "install Docker Engine: https://docs.docker.com/engine/install/",
        ], environment: env)
        // Exec credential plugins run through the same process seam, with this environment and terminal.
        let credentials = CredentialEffects(processes: processes, fs: fs, environment: env, stdinIsTerminal: isatty(0) == 1, clock: SystemClock())
        var ctx = SoContext(fs: fs, processes: processes, clock: SystemClock(), entropy: SystemEntropy(), console: StandardConsole(), environment: env,
                            builtInRoot: lookup.root,
                            connect: { connection in
                                try LiveClients.shared.client(for: connection) {
                                    let client = try HTTPClusterClient(connection, effects: credentials)
                                    client.logger = Tracing.logger("so.api", environment: env)
                                    return client
                                }
                            })
        ctx.builtInSearched = lookup.searched
        ctx.resolver = SystemResolver()
        ctx.hostLocks = FileHostLocks()
        ctx.web = LiveWebClient()
        ctx.hostName = ProcessInfo.processInfo.hostName
        ctx.isProcessAlive = { pid in kill(pid, 0) == 0 || errno == EPERM }
        return ctx
    }
}

/// One HTTPS client per cluster connection for the life of the process: commands that connect more
/// than once (`up`, `cleanup`, `down`) reuse its connection, and the process exits without waiting for
/// connections to close (the kernel closes them).
final class LiveClients: @unchecked Sendable {
    static let shared = LiveClients()
    private let lock = NSLock()
    private var clients: [(ClusterConnection, HTTPClusterClient)] = []

    func client(for connection: ClusterConnection, make: () throws -> HTTPClusterClient) throws -> HTTPClusterClient {
        try lock.withLock {
            if let (_, c) = clients.first(where: { $0.0 == connection }) { return c }
            let c = try make()
            clients.append((connection, c))
            return c
        }
    }
}

/// Runs one command line to completion and returns the exit code; prints errors as
/// `error: …` / `hint: …` and warnings as `warning: …` on stderr.
public enum SoCommandLine {
    public static func execute(_ arguments: [String], context: SoContext) async -> Int32 {
        let console = context.console
        do {
            if let unknown = unknownHelpTopic(arguments) {
                throw SoError.usage("unknown command '\(unknown)'", hint: "run 'so --help' for the list of commands")
            }
            var command = try parse(arguments)
            if let verb = command as? any SoRunnable { try await verb.run(context) } else { try command.run() }
            flushWarnings(context)
            return 0
        } catch let error as ExitCode {
            flushWarnings(context)
            return error.rawValue
        } catch let error as SoError {
            flushWarnings(context)
            console.err(error.description)
            return error.exitCode
        } catch {
            flushWarnings(context)
            let code = SoCommand.exitCode(for: error)
            if code == .success {
                console.out(SoCommand.fullMessage(for: error))
                return 0
            }
            if error is CleanExit || code.rawValue == 0 { return code.rawValue }
            let message = SoCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            let lowered = message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
            console.err("error: " + lowercasedFirst(lowered))
            let path = helpPath(arguments)
            console.err("hint: run 'so \(path.isEmpty ? "" : path + " ")--help' for usage")
            return code.rawValue == 0 ? 2 : code.rawValue
        }
    }

    static func flushWarnings(_ ctx: SoContext) {
        for d in ctx.diagnostics.all { ctx.console.err(d.description) }
    }

    static func lowercasedFirst(_ s: String) -> String {
        guard let f = s.first else { return s }
        return f.lowercased() + s.dropFirst()
    }

    /// The command `arguments` name, parsed: options before or after a subcommand are read where their group
    /// declares them, and a group's option that the chosen verb does not take (`SoRunnable.takes`) is refused.
    public static func parse(_ arguments: [String]) throws -> ParsableCommand {
        let command = try SoCommand.parseAsRoot(arguments)
        if let verb = command as? any SoRunnable, let option = verb.given.first(where: { !type(of: verb).takes.contains($0) }) {
            throw ValidationError("'\(path(to: type(of: verb)))' takes no \(option.rawValue)")
        }
        return command
    }

    /// `so help WORD…` naming no command (ArgumentParser would print the root help and exit 0).
    static func unknownHelpTopic(_ arguments: [String]) -> String? {
        guard arguments.first == "help" else { return nil }
        var command: ParsableCommand.Type = SoCommand.self
        for word in arguments.dropFirst() where !word.hasPrefix("-") {
            guard let child = child(of: command, named: word) else { return word }
            command = child
        }
        return nil
    }

    /// The subcommand words of the command line, for the usage hint: names of subcommands, each below the last, with
    /// options and their values passed over; another word ends them (a group option's value that is also a subcommand
    /// name, as in `deployment --name status start`, can mislead it: only the hint is read this way).
    static func helpPath(_ arguments: [String]) -> String {
        var command: ParsableCommand.Type = SoCommand.self
        var path: [String] = []
        var previous = ""
        for word in arguments {
            defer { previous = word }
            if word == "--" { break }
            if let child = child(of: command, named: word) {
                path.append(word)
                command = child
            } else if !word.hasPrefix("-") && !(previous.hasPrefix("-") && !previous.contains("=")) {
                break
            }
        }
        return path.joined(separator: " ")
    }

    /// `deployment status` for `DeploymentStatusCommand`: the subcommand names that lead to `command`.
    static func path(to command: ParsableCommand.Type, from parent: ParsableCommand.Type = SoCommand.self) -> String {
        for child in parent.configuration.subcommands {
            let name = child.configuration.commandName ?? ""
            if ObjectIdentifier(child) == ObjectIdentifier(command) { return name }
            let below = path(to: command, from: child)
            if !below.isEmpty { return name + " " + below }
        }
        return ""
    }

    static func child(of command: ParsableCommand.Type, named word: String) -> ParsableCommand.Type? {
        command.configuration.subcommands.first { $0.configuration.commandName == word || $0.configuration.aliases.contains(word) }
    }
}
