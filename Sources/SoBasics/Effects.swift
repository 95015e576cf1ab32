import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// The result of running a program to completion.
public struct ProcessResult: Sendable, Equatable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
    public init(exitCode: Int32, stdout: String = "", stderr: String = "") {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }
    /// The last non-empty line of stderr (or stdout), for one-line error messages: the last one that
    /// reads like an error, as git, kind and docker word them (their text is all there is to go on), else
    /// the last one. It only chooses what to show; no decision is made on it.
    public var lastErrorLine: String {
        let lines = (stderr + "\n" + stdout).split(separator: "\n").map { $0.trimmedSpaces }
        return lines.last(where: { !$0.isEmpty && ($0.lowercased().contains("fatal") || $0.lowercased().contains("error")) })
            ?? lines.last(where: { !$0.isEmpty }) ?? "exit code \(exitCode)"
    }
}

/// The one seam for running other programs (git, kind, kubectl, docker), in the four ways `so` runs them.
/// Every runner does all four: no caller asks which it can do.
public protocol ProcessRunner: Sendable {
    /// Runs `arguments[0]` (looked up on PATH) with the rest as arguments; captures output.
    /// Throws `SoError` when the program is not installed.
    func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?) async throws -> ProcessResult

    /// Programs that talk to the user directly (kubectl exec -it): stdin, stdout and stderr are the terminal's.
    func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32

    /// Programs whose output `so` reads but which may ask the user something first (an exec credential
    /// plugin that prompts): stdin and stderr are the terminal's, stdout is captured.
    func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult

    /// Programs that read their input from a file or write their output to one, streamed by the operating
    /// system: a git bundle of any size goes through `kubectl exec` without ever sitting in `so`'s memory.
    /// stderr is captured (and stdout too when it does not go to a file).
    func runStreaming(_ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?) async throws -> ProcessResult
}

extension ProcessRunner {
    public func run(_ arguments: [String], workingDirectory: String? = nil) async throws -> ProcessResult {
        try await run(arguments, workingDirectory: workingDirectory, environment: nil, timeout: nil)
    }
}

/// Runs programs with swift-subprocess.
public struct LocalProcessRunner: ProcessRunner {
    public let installHints: [String: String]
    /// What programs inherit when a caller gives no environment (the context's, read once at start).
    let inherited: [String: String]
    public init(installHints: [String: String] = [:], environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.installHints = installHints
        inherited = environment
    }

    /// The program to run, its path and environment; an error that says what to install when it is missing.
    func locate(_ arguments: [String], _ environment: [String: String]?) throws -> (program: String, executable: String, env: [String: String]) {
        guard let program = arguments.first else { throw SoError("nothing to run", hint: "this is a bug in so") }
        let env = environment ?? inherited
        guard let executable = Self.which(program, path: env["PATH"] ?? "/usr/bin:/bin") else {
            throw SoError.notInstalled(program, hint: installHints[program] ?? "install \(program) and make sure it is on PATH")
        }
        return (program, executable, env)
    }

    public func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?) async throws -> ProcessResult {
        try await launch(arguments, workingDirectory: workingDirectory, environment: environment, timeout: timeout, mode: .captured)
    }

    public func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        try await launch(arguments, workingDirectory: nil, environment: environment, timeout: nil, mode: .attached).exitCode
    }

    public func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        try await launch(arguments, workingDirectory: nil, environment: environment, timeout: nil, mode: .prompting)
    }

    public func runStreaming(_ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?) async throws -> ProcessResult {
        guard stdinFile == nil || stdoutFile == nil else { throw SoError("a program's input and output cannot both be files here",
            hint: "this is a bug in so") }
        if let stdinFile { return try await launch(arguments, workingDirectory: nil, environment: environment, timeout: timeout, mode: .stdinFile(stdinFile)) }
        if let stdoutFile { return try await launch(arguments, workingDirectory: nil, environment: environment, timeout: timeout,
            mode: .stdoutFile(stdoutFile)) }
        return try await run(arguments, workingDirectory: nil, environment: environment, timeout: timeout)
    }

    /// Where a program's stdin, stdout and stderr go.
    enum Mode {
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

    /// Output kept of a captured run, per stream (a docker build's log fits many times over).
    static let outputLimit = 64 << 20

    /// The one way `so` starts a program (swift-subprocess): captured (stdin empty, stdout and stderr
    /// kept), attached (the terminal's own stdin, stdout and stderr, in `so`'s process group, so
    /// `kubectl exec -it` reads the keyboard), or prompting (the terminal's stdin and stderr, stdout kept).
    /// A timeout, or a cancelled task, ends the program with SIGTERM, then SIGKILL two seconds later.
    func launch(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?, mode: Mode) async throws -> ProcessResult {
        let (program, executable, env) = try locate(arguments, environment)
        var options = PlatformOptions()
        options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(2))]
        let spawn: @Sendable () async throws -> ProcessResult = { [options] in
            let variables = Dictionary(uniqueKeysWithValues: env.compactMap { k, v in Environment.Key(rawValue: k).map { ($0, v) } })
            let (exe, args, vars) = (Executable.path(FilePath(executable)), Arguments(Array(arguments.dropFirst())), Environment.custom(variables))
            let directory = workingDirectory.map { FilePath($0) }
            switch mode {
            case .attached:
                fflush(nil)
                let r = try await Subprocess.run(exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                                                 input: .currentStandardInput, output: .currentStandardOutput, error: .currentStandardError)
                return ProcessResult(exitCode: Self.code(r.terminationStatus))
            case .prompting:
                fflush(nil)
                let r = try await Subprocess.run(exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                                                 input: .currentStandardInput, output: .string(limit: Self.outputLimit), error: .currentStandardError)
                return ProcessResult(exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput)
            case .stdinFile(let path):
                let fd = try FileDescriptor.open(FilePath(path), .readOnly)
                let r = try await Subprocess.run(exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                                                 input: .fileDescriptor(fd, closeAfterSpawningProcess: true),
                                                 output: .string(limit: Self.outputLimit), error: .string(limit: Self.outputLimit))
                return ProcessResult(exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput, stderr: r.standardError)
            case .stdoutFile(let path):
                let fd = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
                let r = try await Subprocess.run(exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                                                 input: .none, output: .fileDescriptor(fd, closeAfterSpawningProcess: true),
                                                     error: .string(limit: Self.outputLimit))
                return ProcessResult(exitCode: Self.code(r.terminationStatus), stderr: r.standardError)
            case .captured:
                break
            }
            let r = try await Subprocess.run(exe, arguments: args, environment: vars, workingDirectory: directory, platformOptions: options,
                                             input: .none, output: .string(limit: Self.outputLimit), error: .string(limit: Self.outputLimit))
            return ProcessResult(exitCode: Self.code(r.terminationStatus), stdout: r.standardOutput, stderr: r.standardError)
        }
        do {
            guard let timeout else { return try await spawn() }
            return try await withThrowingTaskGroup(of: ProcessResult?.self) { group in
                group.addTask { try await spawn() }
                group.addTask { try? await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1e9)); return nil }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    group.cancelAll()
                    _ = try? await group.next()
                    throw SoError("\(program) did not finish within \(String(format: "%g", timeout)) s and was stopped",
                                  hint: "run '\(arguments.joined(separator: " "))' by hand to see why it hangs")
                }
                return result
            }
        } catch let e as SoError {
            throw e
        } catch {
            throw SoError("cannot run \(program): \(String(describing: error).lowercased())", hint: "check that \(program) is installed and executable")
        }
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
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// The clock seam: the time, and waiting (tests advance a fake clock instead of sleeping).
public protocol Clock: Sendable {
    func now() -> Date
    func sleep(seconds: Double) async throws
}
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(seconds: Double) async throws { try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9)) }
}

/// The randomness seam. The live one is the system CSPRNG (getrandom on Linux).
public protocol Entropy: Sendable { func bytes(_ count: Int) -> [UInt8] }
public struct SystemEntropy: Entropy {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
    }
}

/// Where output goes. Live: stdout/stderr; tests: captured.
public protocol Console: Sendable {
    func out(_ line: String)
    func err(_ line: String)
    /// A transient line on a terminal, replaced by the next status or output line.
    func status(_ line: String)
    /// Asks a question when both stdin and stdout are a terminal; nil otherwise (scripts, CI).
    func ask(_ question: String) -> String?
    var isTerminal: Bool { get }
}

public extension Console {
    func status(_ line: String) {}
    func ask(_ question: String) -> String? { nil }
}

public struct StandardConsole: Console {
    /// Erases a transient status line before normal output on a terminal.
    static let clearLine = "\r\u{1B}[2K"
    public init() {}
    public func out(_ line: String) { FileHandle.standardOutput.write(Data(((isTerminal ? Self.clearLine : "") + line + "\n").utf8)) }
    public func err(_ line: String) {
        if isTerminal { FileHandle.standardOutput.write(Data(Self.clearLine.utf8)) }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
    public func status(_ line: String) {
        guard isTerminal else { return }
        let width = 120
        let text = line.count > width ? String(line.prefix(width - 1)) + "…" : line
        FileHandle.standardOutput.write(Data((Self.clearLine + text).utf8))
    }
    public var isTerminal: Bool { isatty(1) == 1 }
    public func ask(_ question: String) -> String? {
        guard isatty(0) == 1 && isTerminal else { return nil }
        FileHandle.standardOutput.write(Data(question.utf8))
        return readLine() ?? ""
    }
}

/// Host name → IP addresses (for egress allowlists). Sorted, de-duplicated; empty when unresolvable.
public protocol HostResolver: Sendable {
    func addresses(of host: String) -> [String]
}

/// Resolves nothing: rendering without network access.
public struct NoResolver: HostResolver {
    public init() {}
    public func addresses(of host: String) -> [String] { [] }
}

/// The system resolver (getaddrinfo), IPv4 and IPv6.
public struct SystemResolver: HostResolver {
    public init() {}
    public func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
        defer { freeaddrinfo(first) }
        var out: Set<String> = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(ai.pointee.ai_addr, ai.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                out.insert(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            p = ai.pointee.ai_next
        }
        return out.sorted()
    }
}

/// One HTTP(S) request to a web API that is not the cluster (a pull request on GitHub).
public struct WebRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data?
    public init(method: String, url: String, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct WebResponse: Sendable, Equatable {
    public var status: Int
    public var body: Data
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// The seam for web APIs (HTTPS live, a fake or a local stand-in server in tests).
public protocol WebClient: Sendable {
    func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse
}

/// The default: no web access (a context that needs it is given one).
public struct NoWebClient: WebClient {
    public init() {}
    public func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse {
        throw SoError("no web client in this context", hint: "this is a bug in so (or a test that did not pass a web client)")
    }
}
