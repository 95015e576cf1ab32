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
    public var streamingFallback: (@Sendable ([String], _ stdinFile: String?, _ stdoutFile: String?) async throws -> ProcessResult?)?
    /// The streaming calls, with their files.
    public private(set) var streamed: [(arguments: [String], stdinFile: String?, stdoutFile: String?)] = []

    public init() {}

    public func expect(_ arguments: [String], exitCode: Int32 = 0, stdout: String = "", stderr: String = "", effect: (@Sendable () throws -> Void)? = nil) {
        lock.lock(); defer { lock.unlock() }
        expectations.append(Expectation(arguments: arguments, result: ProcessResult(exitCode: exitCode, stdout: stdout, stderr: stderr), effect: effect))
    }

    public var pending: [[String]] {
        lock.lock(); defer { lock.unlock() }
        return expectations.map(\.arguments)
    }

    /// Attached runs answer like captured ones (their output is not captured: it went to the terminal).
    public func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        try await run(arguments, workingDirectory: nil, environment: environment, timeout: nil).exitCode
    }

    /// Streaming runs: the streaming fallback when it answers, else like captured ones.
    public func runStreaming(_ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?) async throws -> ProcessResult {
        lock.withLock { streamed.append((arguments, stdinFile, stdoutFile)) }
        let scripted = lock.withLock { expectations.first?.arguments == arguments }
        if !scripted, let streamingFallback, let answer = try await streamingFallback(arguments, stdinFile, stdoutFile) {
            lock.withLock { calls.append((arguments, nil)); environments.append(environment) }
            return answer
        }
        return try await run(arguments, workingDirectory: nil, environment: environment, timeout: timeout)
    }

    /// Prompting runs answer like captured ones (stderr went to the terminal).
    public func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        lock.withLock { prompting.append(arguments) }
        var r = try await run(arguments, workingDirectory: nil, environment: environment, timeout: nil)
        r.stderr = ""
        return r
    }

    public func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?) async throws -> ProcessResult {
        lock.withLock { environments.append(environment) }
        let scripted: Bool = {
            lock.lock(); defer { lock.unlock() }
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
            lock.lock(); defer { lock.unlock() }
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
            throw SoError("unexpected process call: \(arguments.joined(separator: " "))", hint: "the test did not expect this call")
        }
        try next.effect?()
        return next.result
    }
}

/// A console that keeps what was printed.
public final class CapturedConsole: Console, @unchecked Sendable {
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errLines: [String] = []
    private var statusLines: [String] = []
    public let isTerminal: Bool

    public init(isTerminal: Bool = false) { self.isTerminal = isTerminal }

    public func out(_ line: String) { lock.lock(); outLines.append(line); lock.unlock() }
    public func err(_ line: String) { lock.lock(); errLines.append(line); lock.unlock() }
    public func status(_ line: String) { lock.lock(); statusLines.append(line); lock.unlock() }
    /// Answers `ask` gives, in order, as a person at a terminal would; with none left, `ask` is a test failure.
    public var answers: [String]? {
        get { lock.lock(); defer { lock.unlock() }; return pendingAnswers }
        set { lock.lock(); pendingAnswers = newValue; lock.unlock() }
    }
    private var pendingAnswers: [String]?
    public private(set) var questions: [String] = []
    public func ask(_ question: String) -> String? {
        lock.lock(); defer { lock.unlock() }
        guard var a = pendingAnswers else { return nil }
        questions.append(question)
        precondition(!a.isEmpty, "CapturedConsole: unexpected question: \(question)")
        let answer = a.removeFirst()
        pendingAnswers = a
        return answer
    }
    /// Transient lines shown on a terminal (never part of stdout).
    public var statuses: [String] { lock.lock(); defer { lock.unlock() }; return statusLines }

    public var stdout: String { lock.lock(); defer { lock.unlock() }; return outLines.joined(separator: "\n") }
    public var stderr: String { lock.lock(); defer { lock.unlock() }; return errLines.joined(separator: "\n") }
    public var stderrLines: [String] {
        lock.lock(); defer { lock.unlock() }
        return errLines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }
}

/// A clock that stands still until something sleeps, then jumps forward by the sleep.
public final class FixedClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date
    public private(set) var slept: Double = 0
    public init(_ date: Date = Date(timeIntervalSince1970: 1_780_000_000)) { self.date = date }
    public func now() -> Date { lock.lock(); defer { lock.unlock() }; return date }
    public func sleep(seconds: Double) async throws {
        lock.withLock {
            date = date.addingTimeInterval(seconds)
            slept += seconds
        }
        await Task.yield()
    }
}

/// Deterministic bytes from a seed (xorshift); never for real secrets.
public final class SeededEntropy: Entropy, @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()
    public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed == 0 ? 1 : seed }
    public func bytes(_ count: Int) -> [UInt8] {
        lock.lock(); defer { lock.unlock() }
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }
}

/// A scratch directory under the system temp dir, removed by `cleanup()`.
public struct TempDir: Sendable {
    public let path: String
    public init(_ label: String = "so-test") throws {
        let base = NSTemporaryDirectory()
        path = try LocalFileSystem().temporaryDirectory(beside: Path.join(base, "x"), prefix: label)
    }
    public func file(_ rel: String) -> String { Path.join(path, rel) }
    public func write(_ rel: String, _ text: String) throws { try LocalFileSystem().writeText(text, to: file(rel)) }
    public func read(_ rel: String) throws -> String { try LocalFileSystem().readText(file(rel)) }
    public func exists(_ rel: String) -> Bool { LocalFileSystem().exists(file(rel)) }
    public func cleanup() { try? LocalFileSystem().removeTree(path) }
}

/// Paths to the repository, its own fixtures and the shared fixtures, from this file's location.
public enum RepoPaths {
    public static var root: String { Path.normalize(Path.join(Path.dirname(#filePath), "..", "..")) }
    /// The repository's own fixtures (Tests/Fixtures): always present.
    public static var fixtures: String { Path.join(root, "Tests", "Fixtures") }
    /// A stack repository in laconic's layout: `stacks/<name>/stack.yml`, `compose/`, `compose-jobs/`, `config/`.
    public static var laconicFixtures: String { Path.join(fixtures, "laconic-repo", "stack-orchestrator") }
    public static func laconicFixture(_ name: String) -> String { Path.join(laconicFixtures, "stacks", name) }
    /// Plain compose projects, one directory each.
    public static var composeFixtures: String { Path.join(fixtures, "compose") }

    /// laconic's compatibility corpus beside the checkout (`../shared/fixtures`): absent in a fresh clone.
    public static var shared: String { Path.normalize(Path.join(root, "..", "shared")) }
    public static var laconicStacks: String { Path.join(shared, "fixtures", "laconic-stacks") }
    public static var composeReal: String { Path.join(shared, "fixtures", "compose-real") }
    /// Whether the shared corpus is there; suites over it are skipped (and say so) when it is not.
    public static var hasShared: Bool {
        LocalFileSystem().isDirectory(laconicStacks) && LocalFileSystem().isDirectory(composeReal)
    }
    public static let sharedAbsent = "../shared/fixtures is absent (a fresh clone): the suites over laconic's corpus are skipped"
}

/// Fixed answers for host names; a name the test did not list resolves to nothing.
public struct StaticResolver: HostResolver {
    public let table: [String: [String]]
    public init(_ table: [String: [String]]) { self.table = table }
    public func addresses(of host: String) -> [String] { table[host] ?? [] }
}
