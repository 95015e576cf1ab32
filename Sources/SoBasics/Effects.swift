import Foundation

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

/// The clock seam: the time, and waiting (tests advance a fake clock instead of sleeping).
public protocol Clock: Sendable {
    func now() -> Date
    func sleep(seconds: Double) async throws
}
/// The randomness seam. The live one is the system CSPRNG (getrandom on Linux).
public protocol Entropy: Sendable { func bytes(_ count: Int) -> [UInt8] }
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

/// Host name → IP addresses (for egress allowlists). Sorted, de-duplicated; empty when unresolvable.
public protocol HostResolver: Sendable {
    func addresses(of host: String) -> [String]
}

/// Resolves nothing: rendering without network access.
public struct NoResolver: HostResolver {
    public init() {}
    public func addresses(of host: String) -> [String] { [] }
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
