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
    /// Where `builtInRoot` was looked for (named in the error when there is none).
    public var builtInSearched: [String] = []
    public var options: GlobalSettings
    /// Opens a client to the API server a connection names (HTTPS live, a fake in tests).
    public var connect: @Sendable (ClusterConnection) throws -> ClusterClient
    /// Web APIs other than the cluster (GitHub, for pull requests).
    public var web: WebClient = NoWebClient()
    /// Resolves the host names of a spec's `egress:` allowlist.
    public var resolver: HostResolver = NoResolver()
    /// This machine's name, recorded on namespaces so `cleanup --orphaned` only judges its own directories.
    public var hostName = "localhost"
    /// Whether a process of this host still runs (a lock whose holder died here is taken over at once).
    public var isProcessAlive: @Sendable (Int32) -> Bool = { _ in true }
    /// What SIGINT/SIGTERM undo (the CLI installs the handlers on `Interrupts.shared`; tests pass their own).
    public var interrupts: Interrupts = .shared
    /// Whether a held Lease is renewed in real time (every third of its duration). Off in tests, whose
    /// clock stands still: on a loaded machine a renewal would land among the writes a test counts.
    public var renewsLocks = true
    /// How long SIGINT/SIGTERM waits for a held Lease's release before `so` exits (it expires later
    /// otherwise). Longer in tests, where a loaded machine can leave the release unscheduled for seconds.
    public var interruptReleaseSeconds = 5.0
    /// Locks between the processes of this host (the kind cluster's creation).
    public var hostLocks: HostLocks = NoHostLocks()
    /// The cluster's Nodes as this process listed them a moment ago (shared by the copies of this context).
    public var nodeListing = NodeListing()
    /// This `so`'s own executable, which a verb starts again for work that outlives it (a pool's refill after a
    /// claim, detached); `so` on PATH when unknown.
    public var selfExecutable = "so"
    /// A step of `so`'s own work named on the trace (`SO_TRACE_API=1`: `phase: WHAT at=+Nms`, from the process's
    /// start); nothing otherwise. What the benchmarks read to tell `so`'s own time from the API server's.
    public var phase: @Sendable (String) -> Void = { _ in }

    public init(
        fs: FileSystem, processes: ProcessRunner, clock: Clock, entropy: Entropy, console: Console,
        environment: [String: String], diagnostics: DiagnosticSink = DiagnosticSink(), builtInRoot: String?,
        options: GlobalSettings = GlobalSettings(),
        connect: @escaping @Sendable (ClusterConnection) throws -> ClusterClient = { _ in
            throw SoError("no cluster client in this context", hint: "tests must pass a fake cluster")
        }
    ) {
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
        StackLocator(
            fs: fs, builtInRoot: builtInRoot, builtInSearched: builtInSearched, environment: environment,
            currentDirectory: fs.currentDirectory)
    }

    /// Where scratch directories go: `$TMPDIR`, else /tmp.
    public var temporaryRoot: String { environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp" }

    /// `$SO_HOME`, else `~/.so`: where `so up` keeps deployment directories.
    public var soHome: String {
        if let h = environment["SO_HOME"], !h.isEmpty { return absolute(Path.expandTilde(h, home: fs.homeDirectory)) }
        return Path.join(fs.homeDirectory, ".so")
    }

    /// The deployment directory `so up --name N` made: `$SO_HOME/deployments/N` for a name that is a DNS-1123
    /// label. Anything else (`..`, `/abs`, empty, `a/b`) is refused with exit 64 before it becomes a path.
    public func namedDeployment(_ name: String) throws -> String {
        try NameRules.checkDeploymentName(name)
        return Path.join(soHome, "deployments", name)
    }

    /// Removes a deployment directory with everything in it. Only `$SO_HOME/deployments/<label>` (what `so up`
    /// made), or a directory whose `deployment.yml` is the deployment of `namespace`, symlinks resolved first.
    package func removeDeploymentDirectory(_ dir: String, namespace: String) throws {
        try fs.removeOwnedTree(dir, owner: deploymentOwner(dir, namespace: namespace))
    }

    /// Whether `removeDeploymentDirectory` would remove `dir` (checked before anything else is deleted).
    package func checkDeploymentDirectory(_ dir: String, namespace: String) throws {
        try fs.checkOwnedTree(dir, owner: deploymentOwner(dir, namespace: namespace))
    }

    private func deploymentOwner(_ dir: String, namespace: String) -> TreeOwner {
        let deployments = Path.join(soHome, "deployments")
        if Path.dirname(fs.realpath(dir)) == fs.realpath(deployments) || fs.kind(dir) == .symlink {
            return .labelledChild(of: deployments)
        }
        let files = fs
        return .vouched(what: "the deployment directory of namespace \(namespace)") { real in
            let yml = Path.join(real, "deployment.yml")
            // A probe: unreadable files vouch for nothing (the removal is refused, naming the directory).
            let probe = DiagnosticSink.dropped("a probe of whose directory this is")
            guard let id = try? DeploymentFile.load(yml, fs: files, diagnostics: probe).deploymentID else {
                return false
            }
            // The same probe: an unreadable spec vouches for nothing either.
            let spec = try? Spec.load(Path.join(real, "spec.yml"), fs: files, diagnostics: probe)
            return id == namespace || spec?.namespace == namespace
        }
    }

    /// Prints unless `--quiet`.
    public func say(_ line: String) { if !options.quiet { console.out(line) } }
    public func verbose(_ line: String) { if options.verbose { console.err(line) } }

    /// An absolute path for a path given on the command line.
    public func absolute(_ path: String) -> String {
        Path.absolute(Path.expandTilde(path, home: fs.homeDirectory), relativeTo: fs.currentDirectory)
    }
}

extension SoContext {
    /// An error's message without its hint (for a warning that gives its own).
    public static func oneLine(_ error: Error) -> String { (error as? SoError)?.message ?? "\(error)" }
}

extension SoContext {
    /// Runs `release` when SIGINT/SIGTERM arrives, waiting for it at most `interruptReleaseSeconds` before `so`
    /// exits (what it gives up, a Lease, expires later otherwise). Returns the cleanup's id for
    /// `interrupts.done(_:)` once the hold ends without an interrupt. One wait for every holder: a Lease and a
    /// claimed pool member are given back alike.
    public func releasingOnInterrupt(_ release: @escaping @Sendable () async -> Void) -> Int {
        let seconds = interruptReleaseSeconds
        return interrupts.onInterrupt {
            let released = DispatchSemaphore(value: 0)
            Task {
                await release()
                released.signal()
            }
            _ = released.wait(timeout: .now() + seconds)
        }
    }
}
