import Foundation
import SoBasics
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Runs programs with swift-subprocess.
public struct LocalProcessRunner: ProcessRunner {
    public let installHints: [String: String]
    /// What programs inherit when a caller gives no environment (the context's, read once at start).
    let inherited: [String: String]
    public init(
        installHints: [String: String] = [:], environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.installHints = installHints
        inherited = environment
    }

    /// The program to run, its path and environment; an error that says what to install when it is missing.
    func locate(_ arguments: [String], _ environment: [String: String]?) throws -> (
        program: String, executable: String, env: [String: String]
    ) {
        guard let program = arguments.first else { throw SoError("nothing to run", hint: "this is a bug in so") }
        let env = environment ?? inherited
        guard let executable = Self.which(program, path: env["PATH"] ?? "/usr/bin:/bin") else {
            throw SoError.notInstalled(
                program, hint: installHints[program] ?? "install \(program) and make sure it is on PATH")
        }
        return (program, executable, env)
    }

    public func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        try await launch(
            arguments, workingDirectory: workingDirectory, environment: environment, timeout: timeout, mode: .captured)
    }

    public func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        try await launch(arguments, workingDirectory: nil, environment: environment, timeout: nil, mode: .attached)
            .exitCode
    }

    public func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        try await launch(arguments, workingDirectory: nil, environment: environment, timeout: nil, mode: .prompting)
    }

    public func runStreaming(
        _ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?
    ) async throws -> ProcessResult {
        guard stdinFile == nil || stdoutFile == nil else {
            throw SoError(
                "a program's input and output cannot both be files here",
                hint: "this is a bug in so")
        }
        if let stdinFile {
            return try await launch(
                arguments, workingDirectory: nil, environment: environment, timeout: timeout,
                mode: .stdinFile(stdinFile))
        }
        if let stdoutFile {
            return try await launch(
                arguments, workingDirectory: nil, environment: environment, timeout: timeout,
                mode: .stdoutFile(stdoutFile))
        }
        return try await run(arguments, workingDirectory: nil, environment: environment, timeout: timeout)
    }

    public func runFeeding(_ arguments: [String], input: [UInt8], environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        try await launch(
            arguments, workingDirectory: nil, environment: environment, timeout: timeout, mode: .stdinBytes(input))
    }

    public func runLines(
        _ arguments: [String], environment: [String: String]?, line: @escaping @Sendable (String) -> Void
    ) async throws -> Int32 {
        let (program, executable, env) = try locate(arguments, environment)
        var options = PlatformOptions()
        options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(2))]
        let variables = Self.environment(env)
        fflush(nil)
        do {
            let r = try await Subprocess.run(
                .path(FilePath(executable)), arguments: Arguments(Array(arguments.dropFirst())),
                environment: .custom(variables), platformOptions: options, input: .none, output: .sequence,
                error: .currentStandardError
            ) { execution in
                // Bytes split at each newline here: a line of any length (an agent's tool output) is one line.
                var pending: [UInt8] = []
                for try await buffer in execution.standardOutput {
                    buffer.withUnsafeBytes { pending.append(contentsOf: $0) }
                    var start = 0
                    while let nl = pending[start...].firstIndex(of: 10) {
                        line(String(decoding: pending[start..<nl], as: UTF8.self))
                        start = nl + 1
                    }
                    pending.removeFirst(start)
                }
                if !pending.isEmpty { line(String(decoding: pending, as: UTF8.self)) }
            }
            return Self.code(r.terminationStatus)
        } catch {
            throw Self.cannotRun(program, error)
        }
    }

    public func spawnDetached(_ arguments: [String], environment: [String: String]?, output: String?) throws -> Int32 {
        let (program, executable, env) = try locate(arguments, environment)
        var attr = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        posix_spawnattr_init(&attr)
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawnattr_destroy(&attr)
            posix_spawn_file_actions_destroy(&actions)
        }
        // A session of its own (no controlling terminal: this one's Ctrl-C and hang-up do not reach it), default
        // signal handling, stdin from /dev/null, stdout and stderr to `output`.
        posix_spawnattr_setflags(&attr, Int16(Self.spawnSetsid | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attr, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attr, argv, envp)
        guard rc == 0 else {
            throw SoError(
                "cannot start \(program): \(String(cString: strerror(rc)))",
                hint: "check that \(program) is installed and executable")
        }
        // Background work, at the lowest priority from its first instruction on (its children too): a claim's refill
        // starts as the claim returns, and its own start (10-15 ms of a processor) slowed the claimer's first exec.
        // Best effort: a program that runs at the usual priority still runs.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(pid), Self.detachedNice)
        return pid
    }

    /// The niceness of a detached program (the lowest priority).
    static let detachedNice: Int32 = 19

    /// glibc's POSIX_SPAWN_SETSID (spawn.h; not imported into Swift: it is declared under _GNU_SOURCE).
    static let spawnSetsid: Int32 = 0x80

    /// Where a program's stdin, stdout and stderr go.
    enum Mode {
        /// stdin these bytes (held in memory only); stdout and stderr kept.
        case stdinBytes([UInt8])
        /// stdin read from this file; stdout and stderr kept.
        case stdinFile(String)
        /// stdin empty; stdout written to this file (created or truncated, mode 0600); stderr kept.
        case stdoutFile(String)
        /// stdin empty, stdout and stderr kept.
        case captured
        /// The terminal's own three.
        case attached
        /// The terminal's stdin and stderr (it may ask something); stdout kept.
        case prompting
    }

    /// A write to a pipe whose reader is gone fails (EPIPE) instead of ending this process: SIGPIPE ignored where
    /// nothing handles it yet (`so` itself handles it from its start, `Interrupts`; a process that only runs programs,
    /// a test's, does not).
    static func survivePipesNoOneReads() {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil else { return }
        signal(SIGPIPE, SIG_IGN)
    }

    /// Output kept of a captured run, per stream (a docker build's log fits many times over).
    static let outputLimit = 64 << 20

    /// The one way `so` starts a program (swift-subprocess): captured (stdin empty, stdout and stderr
    /// kept), attached (the terminal's own stdin, stdout and stderr, in `so`'s process group, so
    /// `kubectl exec -it` reads the keyboard), or prompting (the terminal's stdin and stderr, stdout kept).
    /// A timeout, or a cancelled task, ends the program with SIGTERM, then SIGKILL two seconds later.
    func launch(
        _ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?, mode: Mode
    ) async throws -> ProcessResult {
        let (program, executable, env) = try locate(arguments, environment)
        var options = PlatformOptions()
        options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(2))]
        let spawn: @Sendable () async throws -> ProcessResult = { [options] in
            try await Self.spawn(
                executable, Array(arguments.dropFirst()), env: env, workingDirectory: workingDirectory,
                options: options, mode: mode)
        }
        do {
            guard let timeout else { return try await spawn() }
            guard let result = try await Deadline.within(timeout, spawn) else {
                throw SoError(
                    "\(program) did not finish within \(String(format: "%g", timeout)) s and was stopped",
                    hint: "run \(CommandText.brief(arguments)) by hand to see why it hangs")
            }
            return result
        } catch {
            throw Self.cannotRun(program, error)
        }
    }

    /// A failure to run `program` as one line (an `SoError` already is one).
    static func cannotRun(_ program: String, _ error: Error) -> Error {
        if error is SoError { return error }
        return SoError(
            "cannot run \(program): \(String(describing: error).lowercased())",
            hint: "check that \(program) is installed and executable")
    }

    /// `env` as the child's environment (a name the platform cannot take is left out).
    static func environment(_ env: [String: String]) -> [Environment.Key: String] {
        Dictionary(uniqueKeysWithValues: env.compactMap { k, v in Environment.Key(rawValue: k).map { ($0, v) } })
    }

    /// One run of `executable` with its stdin, stdout and stderr as `mode` says.
    static func spawn(
        _ executable: String, _ arguments: [String], env: [String: String], workingDirectory: String?,
        options: PlatformOptions, mode: Mode
    ) async throws -> ProcessResult {
        let variables = Self.environment(env)
        let (exe, args, vars) = (
            Executable.path(FilePath(executable)), Arguments(arguments),
            Environment.custom(variables)
        )
        let directory = workingDirectory.map { FilePath($0) }
        switch mode {
        case .attached:
            fflush(nil)
            let r = try await Subprocess.run(
                exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                input: .currentStandardInput, output: .currentStandardOutput, error: .currentStandardError)
            return ProcessResult(exitCode: Self.code(r.terminationStatus))
        case .prompting:
            fflush(nil)
            let r = try await Subprocess.run(
                exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                input: .currentStandardInput, output: .string(limit: Self.outputLimit), error: .currentStandardError
            )
            return ProcessResult(exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput)
        case .stdinFile(let path):
            let fd = try FileDescriptor.open(FilePath(path), .readOnly)
            let r = try await Subprocess.run(
                exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                input: .fileDescriptor(fd, closeAfterSpawningProcess: true),
                output: .string(limit: Self.outputLimit), error: .string(limit: Self.outputLimit))
            return ProcessResult(
                exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput, stderr: r.standardError)
        case .stdinBytes(let bytes):
            Self.survivePipesNoOneReads()
            // Written here, not by swift-subprocess's own writer (`.array`): a program that ends without reading them
            // (kubectl failing before it reads) makes the write fail, and that writer then left its pipe open and
            // stopped the process ("FileDescriptor … was not closed"). What is not read is dropped; the pipe is closed
            // either way, and the program's status says how it went.
            let r = try await Subprocess.run(
                Configuration(
                    executable: exe, arguments: args, environment: vars, workingDirectory: directory,
                    platformOptions: options),
                input: .inputWriter, output: .string(limit: Self.outputLimit),
                error: .string(limit: Self.outputLimit)
            ) { execution in
                // best effort: a failed write is the program's not reading (EPIPE); its exit status tells the rest
                _ = try? await execution.standardInputWriter.write(bytes)
                try await execution.standardInputWriter.finish()
            }
            return ProcessResult(
                exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput, stderr: r.standardError)
        case .stdoutFile(let path):
            let fd = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
            let r = try await Subprocess.run(
                exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                input: .none, output: .fileDescriptor(fd, closeAfterSpawningProcess: true),
                error: .string(limit: Self.outputLimit))
            return ProcessResult(exitCode: Self.code(r.terminationStatus), stderr: r.standardError)
        case .captured:
            break
        }
        let r = try await Subprocess.run(
            exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
            input: .none, output: .string(limit: Self.outputLimit), error: .string(limit: Self.outputLimit))
        return ProcessResult(
            exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput, stderr: r.standardError)
    }

    /// The exit code, or the number of the signal that ended the program (what Foundation's Process,
    /// used before, reported; callers and `so exec`'s exit code keep seeing the same).
    static func code(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code): return code
        case .signaled(let signal): return signal
        }
    }

    public static func which(_ program: String, path: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(program)"
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }
}
