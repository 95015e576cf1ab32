import Foundation
import ArgumentParser
import SoActions
import SoBasics
import SoKube
import SoKubeHTTP
import Logging
import SoStack

public enum SoVersion {
    public static let current = "0.1.0"
}

/// The root command. Commands are thin: parse, build the context, call one action, print.
public struct SoCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "so",
        abstract: "Deploy stacks of compose files onto Kubernetes (a shared kind cluster, or any cluster).",
        discussion: """
        A stack is a stack.yml naming compose files (pods). 'deploy init' writes a spec of per-deployment overrides, 'deploy create' turns it into a deployment directory. Options may come before or after the subcommand, as with laconic-so.

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
    public init() {}
}

/// Options every command takes (laconic-so's global options, placed before or after the subcommand).
public struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Stack: a built-in name, or a path to a stack directory.", valueName: "name|path"))
    public var stack: String?

    @Option(name: .long, help: ArgumentHelp("Directory holding the built-in stacks/, compose/, config/ (default: $SO_ROOT, then beside the so binary).", valueName: "dir"))
    public var root: String?

    @Flag(name: .long, help: "Print less.") public var quiet = false
    @Flag(name: .long, help: "Print more.") public var verbose = false
    @Flag(name: .long, help: .hidden) public var debug = false

    public init() {}

    /// The live context with these options applied.
    func context(dryRun: Bool = false) -> SoContext {
        var ctx = SoRuntime.context
        ctx.options = GlobalSettings(quiet: quiet, verbose: verbose, dryRun: dryRun, debug: debug)
        if let root {
            ctx.builtInRoot = ctx.absolute(root)
            ctx.builtInSearched = ["\(ctx.absolute(root)) (--root)"]
        }
        return ctx
    }

    func requireStack(_ command: String) throws -> String {
        guard let stack else {
            throw SoError.usage("\(command) needs --stack", hint: "pass --stack NAME (see 'so stack list') or --stack PATH")
        }
        return stack
    }
}

/// `--dry-run`, on the commands where it means something: they then change nothing and say what they would do.
public struct DryRunFlag: ParsableArguments {
    @Flag(name: .long, help: "Change nothing; print what would be done.") public var dryRun = false
    public init() {}
}

/// The context commands run with: live wiring in `main`, fakes in tests.
public enum SoRuntime {
    @TaskLocal public static var context: SoContext = .live()
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
        await SoRuntime.$context.withValue(context) {
            let console = context.console
            do {
                if let unknown = unknownHelpTopic(arguments) {
                    throw SoError.usage("unknown command '\(unknown)'", hint: "run 'so --help' for the list of commands")
                }
                var command = try SoCommand.parseAsRoot(ArgumentOrder.hoist(arguments))
                if var async = command as? AsyncParsableCommand { try await async.run() } else { try command.run() }
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
    }

    static func flushWarnings(_ ctx: SoContext) {
        for d in ctx.diagnostics.all { ctx.console.err(d.description) }
    }

    static func lowercasedFirst(_ s: String) -> String {
        guard let f = s.first else { return s }
        return f.lowercased() + s.dropFirst()
    }

    /// `so help WORD…` naming no command (ArgumentParser would print the root help and exit 0).
    static func unknownHelpTopic(_ arguments: [String]) -> String? {
        guard arguments.first == "help" else { return nil }
        var command: ParsableCommand.Type = SoCommand.self
        for word in arguments.dropFirst() where !word.hasPrefix("-") {
            guard let child = ArgumentOrder.child(of: command, named: word) else { return word }
            command = child
        }
        return nil
    }

    /// The subcommand words of the command line, for the usage hint.
    static func helpPath(_ arguments: [String]) -> String {
        var command: ParsableCommand.Type = SoCommand.self
        var path: [String] = []
        for word in ArgumentOrder.hoist(arguments) {
            guard let child = ArgumentOrder.child(of: command, named: word) else { break }
            path.append(word)
            command = child
        }
        return path.joined(separator: " ")
    }
}

/// laconic-so puts options on groups (`so --stack S deploy --deploy-to k8s-kind init …`, `so deployment --dir D
/// status`); ArgumentParser reads options only after the last subcommand name. This moves options written
/// before a subcommand name to just after the full subcommand path, keeping their order. Which options take
/// a value is read from the command tree ArgumentParser itself describes (`_dumpHelp`), so a new option
/// needs no list kept here.
enum ArgumentOrder {
    static func hoist(_ arguments: [String]) -> [String] {
        var path: [String] = []
        var hoisted: [String] = []
        var current: ParsableCommand.Type = SoCommand.self
        var i = 0
        while i < arguments.count, !children(of: current).isEmpty {
            let word = arguments[i]
            if let child = child(of: current, named: word) {
                path.append(word)
                current = child
                i += 1
            } else if word.hasPrefix("-") && word != "--" && word != "-" && !["-h", "--help", "--version"].contains(word) {
                hoisted.append(word)
                i += 1
                if !word.contains("="), i < arguments.count, takesValue(word, next: arguments[i], below: current, path: path) {
                    hoisted.append(arguments[i])
                    i += 1
                }
            } else {
                break
            }
        }
        if path.isEmpty || hoisted.isEmpty { return arguments }
        return path + hoisted + arguments[i...]
    }

    /// Whether `option` (written before the subcommand path ends) takes `next` as its value. Before the
    /// path ends no positional argument can stand, so a word that is neither an option nor a subcommand name
    /// is the option's value. Only a subcommand name after it is ambiguous (`--verbose status` or `--name
    /// status`): then the command tree ArgumentParser describes decides. Building that tree costs start-up
    /// time (a full help dump), so the usual command lines never build it.
    static func takesValue(_ option: String, next: String, below command: ParsableCommand.Type, path: [String]) -> Bool {
        if next.hasPrefix("-") && next != "-" { return false }
        if child(of: command, named: next) == nil { return true }
        return CommandTree.root.node(at: path)?.takesValue(option, next: next) ?? false
    }

    static func children(of command: ParsableCommand.Type) -> [ParsableCommand.Type] {
        let c = command.configuration
        return c.subcommands + c.groupedSubcommands.flatMap(\.subcommands)
    }

    static func child(of command: ParsableCommand.Type, named word: String) -> ParsableCommand.Type? {
        children(of: command).first { $0.configuration.commandName == word || $0.configuration.aliases.contains(word) }
    }
}

/// The subcommands and option names of `so`, as ArgumentParser describes them.
struct CommandTree: Sendable {
    var names: [String]
    var children: [CommandTree]
    /// Options that take a value, and flags, declared here or in any subcommand below.
    var valued: Set<String>
    var flags: Set<String>

    func child(named word: String) -> CommandTree? { children.first { $0.names.contains(word) } }

    func node(at path: [String]) -> CommandTree? {
        path.reduce(Optional(self)) { node, word in node?.child(named: word) }
    }

    /// Whether `option`, written before a subcommand name, takes the next word as its value. A name that
    /// is a flag in one subcommand and takes a value in another (`-f`) takes it unless it is a subcommand name.
    func takesValue(_ option: String, next: String) -> Bool {
        guard valued.contains(option) else { return false }
        return !(flags.contains(option) && child(named: next) != nil)
    }

    static let root: CommandTree = {
        guard let info = try? JSONDecoder().decode(ToolInfo.self, from: Data(SoCommand._dumpHelp().utf8)) else {
            return CommandTree(names: ["so"], children: [], valued: [], flags: [])
        }
        return CommandTree(info.command)
    }()

    init(names: [String], children: [CommandTree], valued: Set<String>, flags: Set<String>) {
        self.names = names
        self.children = children
        self.valued = valued
        self.flags = flags
    }

    init(_ c: ToolInfo.Command) {
        names = [c.commandName] + (c.aliases ?? [])
        children = (c.subcommands ?? []).filter { $0.commandName != "help" }.map(CommandTree.init)
        var valued = Set<String>(), flags = Set<String>()
        for a in c.arguments ?? [] {
            let spelled = (a.names ?? []).map { $0.kind == "short" ? "-" + $0.name : ($0.kind == "long" ? "--" + $0.name : "-" + $0.name) }
            if a.kind == "option" { valued.formUnion(spelled) } else if a.kind == "flag" { flags.formUnion(spelled) }
        }
        for child in children {
            valued.formUnion(child.valued)
            flags.formUnion(child.flags)
        }
        self.valued = valued
        self.flags = flags
    }

    /// The part of ArgumentParser's `--experimental-dump-help` JSON read here.
    struct ToolInfo: Decodable {
        struct Name: Decodable { var kind: String; var name: String }
        struct Argument: Decodable { var kind: String; var names: [Name]? }
        struct Command: Decodable {
            var commandName: String
            var aliases: [String]?
            var subcommands: [Command]?
            var arguments: [Argument]?
        }
        var command: Command
    }
}
