import Foundation
import SoBasics
import SoKube
import SoStack

/// Everything an action may touch. Live wiring in the CLI; fakes in tests.
public struct SoContext: Sendable {
    public var fs: FileSystem
    public var processes: ProcessRunner
    public var clock: Clock
    public var entropy: Entropy
    public var console: Console
    public var environment: [String: String]
    public var diagnostics: DiagnosticSink
    public var builtInRoot: String?
    public var options: GlobalSettings
    /// Opens a client to the API server a connection names (HTTPS live, a fake in tests).
    public var connect: @Sendable (ClusterConnection) throws -> ClusterClient

    public init(fs: FileSystem, processes: ProcessRunner, clock: Clock, entropy: Entropy, console: Console,
                environment: [String: String], diagnostics: DiagnosticSink = DiagnosticSink(), builtInRoot: String?,
                options: GlobalSettings = GlobalSettings(),
                connect: @escaping @Sendable (ClusterConnection) throws -> ClusterClient = { _ in
                    throw SoError("no cluster client in this context", hint: "tests must pass a fake cluster")
                }) {
        self.connect = connect
        self.fs = fs
        self.processes = processes
        self.clock = clock
        self.entropy = entropy
        self.console = console
        self.environment = environment
        self.diagnostics = diagnostics
        self.builtInRoot = builtInRoot
        self.options = options
    }

    public var locator: StackLocator {
        StackLocator(fs: fs, builtInRoot: builtInRoot, environment: environment, currentDirectory: fs.currentDirectory)
    }

    /// Prints unless `--quiet`.
    public func say(_ line: String) { if !options.quiet { console.out(line) } }
    public func verbose(_ line: String) { if options.verbose { console.err(line) } }

    /// An absolute path for a path given on the command line.
    public func absolute(_ path: String) -> String {
        Path.absolute(Path.expandTilde(path, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
    }
}

/// Options every command accepts (laconic-so's global options).
public struct GlobalSettings: Sendable {
    public var quiet = false
    public var verbose = false
    public var dryRun = false
    public var debug = false
    public init(quiet: Bool = false, verbose: Bool = false, dryRun: Bool = false, debug: Bool = false) {
        self.quiet = quiet
        self.verbose = verbose
        self.dryRun = dryRun
        self.debug = debug
    }
}
