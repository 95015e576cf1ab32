import Foundation
import SoBasics
import SoSystem

/// A process runner that answers only the calls a test scripted, in order, and records every call.
/// An unexpected call fails loudly (it throws and is recorded in `unexpected`).
public final class FakeProcessRunner: ProcessRunner, @unchecked Sendable {
    public struct Expectation {
        public var arguments: [String]
        public var result: ProcessResult
        /// Run when the call is answered (e.g. to create the directory a clone would make).
        public var effect: (@Sendable () throws -> Void)?
    }

    private let lock = NSLock()
    private var expectations: [Expectation] = []
    public private(set) var calls: [(arguments: [String], workingDirectory: String?)] = []
    public private(set) var unexpected: [[String]] = []
    /// The environment each call was given (nil: inherited), in the order of `calls`.
    public private(set) var environments: [[String: String]?] = []
    /// The calls that ran prompting (the terminal's stdin and stderr, stdout read).
    public private(set) var prompting: [[String]] = []
    /// Programs reported as not installed.
    public var missing: Set<String> = []
    /// Answers a call no scripted expectation matches (nil: unexpected after all); for stand-ins that run
    /// the real thing, such as `kubectl exec` scripts run against a local directory.
    public var fallback: (@Sendable ([String]) async throws -> ProcessResult?)?
    /// Like `fallback`, with the environment the call was given (nil: inherited); asked first.
    public var environmentFallback: (@Sendable ([String], [String: String]?) async throws -> ProcessResult?)?
    /// Answers a streaming call (stdin from a file, or stdout to one) no scripted expectation matches;
    /// nil, or a nil answer: it is answered as a captured call.
    public var streamingFallback:
        (@Sendable ([String], _ stdinFile: String?, _ stdoutFile: String?) async throws -> ProcessResult?)?
    /// The streaming calls, with their files.
    public private(set) var streamed: [(arguments: [String], stdinFile: String?, stdoutFile: String?)] = []
    /// The calls fed bytes on stdin, with the bytes (as text).
    public private(set) var fed: [(arguments: [String], input: String)] = []
    /// Answers a fed call (its arguments and the bytes) no scripted expectation matches; nil, or a nil answer: it is
    /// answered as a captured call.
    public var feedingFallback: (@Sendable ([String], [UInt8]) async throws -> ProcessResult?)?

    public init() {}

    public func expect(
        _ arguments: [String], exitCode: Int32 = 0, stdout: String = "", stderr: String = "",
        effect: (@Sendable () throws -> Void)? = nil
    ) {
        lock.lock()
        defer { lock.unlock() }
        expectations.append(
            Expectation(
                arguments: arguments, result: ProcessResult(exitCode: exitCode, stdout: stdout, stderr: stderr),
                effect: effect))
    }

    public var pending: [[String]] {
        lock.lock()
        defer { lock.unlock() }
        return expectations.map(\.arguments)
    }

    /// Attached runs answer like captured ones (their output is not captured: it went to the terminal).
    public func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        try await run(arguments, workingDirectory: nil, environment: environment, timeout: nil).exitCode
    }

    /// Streaming runs: the streaming fallback when it answers, else like captured ones.
    public func runStreaming(
        _ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?
    ) async throws -> ProcessResult {
        lock.withLock { streamed.append((arguments, stdinFile, stdoutFile)) }
        let scripted = lock.withLock { expectations.first?.arguments == arguments }
        if !scripted, let streamingFallback, let answer = try await streamingFallback(arguments, stdinFile, stdoutFile)
        {
            lock.withLock {
                calls.append((arguments, nil))
                environments.append(environment)
            }
            return answer
        }
        return try await run(arguments, workingDirectory: nil, environment: environment, timeout: timeout)
    }

    /// Fed runs: recorded with their bytes, then the feeding fallback when it answers, else like captured ones.
    public func runFeeding(_ arguments: [String], input: [UInt8], environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        let text = String(decoding: input, as: UTF8.self)
        lock.withLock { fed.append((arguments, text)) }
        let scripted = lock.withLock { expectations.first?.arguments == arguments }
        if !scripted, let feedingFallback, let answer = try await feedingFallback(arguments, input) {
            lock.withLock {
                calls.append((arguments, nil))
                environments.append(environment)
            }
            return answer
        }
        return try await run(arguments, workingDirectory: nil, environment: environment, timeout: timeout)
    }

    /// Line runs answer like captured ones, their stdout handed over line by line (stderr went to the terminal).
    public func runLines(
        _ arguments: [String], environment: [String: String]?, line: @escaping @Sendable (String) -> Void
    ) async throws -> Int32 {
        let r = try await run(arguments, workingDirectory: nil, environment: environment, timeout: nil)
        var lines = r.stdout.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        lines.forEach(line)
        return r.exitCode
    }

    /// Detached programs: recorded with where their output goes (a test runs what they would, if it needs to),
    /// never run; each gets a process id of its own from 40000 up.
    public private(set) var detached: [(arguments: [String], output: String?)] = []
    public func spawnDetached(_ arguments: [String], environment: [String: String]?, output: String?) throws -> Int32 {
        lock.withLock {
            detached.append((arguments, output))
            return Int32(40000 + detached.count)
        }
    }

    /// Prompting runs answer like captured ones (stderr went to the terminal).
    public func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        lock.withLock { prompting.append(arguments) }
        var r = try await run(arguments, workingDirectory: nil, environment: environment, timeout: nil)
        r.stderr = ""
        return r
    }

    public func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        lock.withLock { environments.append(environment) }
        let scripted: Bool = {
            lock.lock()
            defer { lock.unlock() }
            return expectations.first?.arguments == arguments || missing.contains(arguments.first ?? "")
        }()
        if !scripted, let environmentFallback, let answer = try await environmentFallback(arguments, environment) {
            lock.withLock { calls.append((arguments, workingDirectory)) }
            return answer
        }
        if !scripted, let fallback, let answer = try await fallback(arguments) {
            lock.withLock { calls.append((arguments, workingDirectory)) }
            return answer
        }
        let next: Expectation? = {
            lock.lock()
            defer { lock.unlock() }
            calls.append((arguments, workingDirectory))
            if let program = arguments.first, missing.contains(program) { return nil }
            guard let first = expectations.first, first.arguments == arguments else {
                unexpected.append(arguments)
                return nil
            }
            expectations.removeFirst()
            return first
        }()
        if let program = arguments.first, missing.contains(program) {
            throw SoError.notInstalled(program, hint: "install \(program)")
        }
        guard let next else {
            throw SoError(
                "unexpected process call: \(arguments.joined(separator: " "))",
                hint: "the test did not expect this call")
        }
        try next.effect?()
        return next.result
    }
}
