import Foundation

/// The one seam for running other programs (git, kind, kubectl, docker), in the ways `so` runs them.
/// Every runner does all four: no caller asks which it can do.
public protocol ProcessRunner: Sendable {
    /// Runs `arguments[0]` (looked up on PATH) with the rest as arguments; captures output.
    /// Throws `SoError` when the program is not installed.
    func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult

    /// Programs that talk to the user directly (kubectl exec -it): stdin, stdout and stderr are the terminal's.
    func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32

    /// Programs whose output `so` reads but which may ask the user something first (an exec credential
    /// plugin that prompts): stdin and stderr are the terminal's, stdout is captured.
    func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult

    /// Programs that read their input from a file or write their output to one, streamed by the operating
    /// system: a git bundle of any size goes through `kubectl exec` without ever sitting in `so`'s memory.
    /// stderr is captured (and stdout too when it does not go to a file).
    func runStreaming(
        _ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?
    ) async throws -> ProcessResult

    /// Programs that read a few bytes `so` holds in memory on their stdin (credentials handed into a container):
    /// the bytes never sit in a file. stdout and stderr are captured.
    func runFeeding(_ arguments: [String], input: [UInt8], environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult

    /// Programs whose output `so` shows as it comes, after reading it (a task's log, rendered): each line of
    /// stdout goes to `line` (without its newline) once complete, the last one at the end even without a newline.
    /// stdin is empty, stderr the terminal's. The exit code.
    func runLines(_ arguments: [String], environment: [String: String]?, line: @escaping @Sendable (String) -> Void)
        async throws -> Int32

    /// Programs that outlive `so` (a pool's refill after a claim): started in a session of their own (no terminal,
    /// no signal from this one's), at the lowest priority (background work), stdin empty, stdout and stderr appended
    /// to `output` (else discarded), and not waited for. Their process id.
    func spawnDetached(_ arguments: [String], environment: [String: String]?, output: String?) throws -> Int32
}

extension ProcessRunner {
    public func run(_ arguments: [String], workingDirectory: String? = nil) async throws -> ProcessResult {
        try await run(arguments, workingDirectory: workingDirectory, environment: nil, timeout: nil)
    }
}
