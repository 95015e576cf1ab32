import Foundation
import Logging
import SoBasics

/// A `ProcessRunner` that logs each program it runs, with `SO_TRACE_API` set: `proc: kubectl exec 112ms exit 0`
/// (`at=` says when, from the start of `so`). Only the program and its verb are named: arguments can hold a
/// repository's URL with a token in it, and what goes to stdin (credentials) is never read here.
struct TracingProcessRunner: ProcessRunner {
    let inner: ProcessRunner
    let logger: Logger

    /// `kubectl exec`, `git log`: the program and its first word that is neither a flag nor a flag's value.
    static func name(_ arguments: [String]) -> String {
        var words = arguments.dropFirst().makeIterator()
        while let w = words.next() {
            if w.hasPrefix("-") {
                // `-n ns`, `--kubeconfig /k`: the value goes too; `--x=y` and `-i` stand alone.
                if !w.contains("="), !["-i", "-t", "-it", "-q", "--stdin", "--tty"].contains(w) { _ = words.next() }
                continue
            }
            if w.range(of: "^[a-z][a-z-]*$", options: .regularExpression) != nil {
                return "\(Path.basename(arguments.first ?? "?")) \(w)"
            }
            break
        }
        return Path.basename(arguments.first ?? "?")
    }

    func traced(_ arguments: [String], _ body: () async throws -> ProcessResult) async rethrows -> ProcessResult {
        let began = ContinuousClock.now
        let out = try await body()
        said(arguments, began, exit: out.exitCode)
        return out
    }

    func traced(_ arguments: [String], _ body: () async throws -> Int32) async rethrows -> Int32 {
        let began = ContinuousClock.now
        let out = try await body()
        said(arguments, began, exit: out)
        return out
    }

    func said(_ arguments: [String], _ began: ContinuousClock.Instant, exit: Int32) {
        let took = (ContinuousClock.now - began).components
        let ms = took.seconds * 1000 + took.attoseconds / 1_000_000_000_000_000
        logger.debug("\(Self.name(arguments)) \(ms)ms exit \(exit)")
    }

    func run(_ arguments: [String], workingDirectory: String?, environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        try await traced(arguments) {
            try await inner.run(
                arguments, workingDirectory: workingDirectory, environment: environment, timeout: timeout)
        }
    }

    func runAttached(_ arguments: [String], environment: [String: String]?) async throws -> Int32 {
        try await traced(arguments) { try await inner.runAttached(arguments, environment: environment) }
    }

    func runPrompting(_ arguments: [String], environment: [String: String]?) async throws -> ProcessResult {
        try await traced(arguments) {
            try await inner.runPrompting(arguments, environment: environment)
        }
    }

    func runStreaming(
        _ arguments: [String], stdinFile: String?, stdoutFile: String?, environment: [String: String]?,
        timeout: Double?
    ) async throws -> ProcessResult {
        try await traced(arguments) {
            try await inner.runStreaming(
                arguments, stdinFile: stdinFile, stdoutFile: stdoutFile, environment: environment, timeout: timeout)
        }
    }

    func runFeeding(_ arguments: [String], input: [UInt8], environment: [String: String]?, timeout: Double?)
        async throws -> ProcessResult
    {
        try await traced(arguments) {
            try await inner.runFeeding(arguments, input: input, environment: environment, timeout: timeout)
        }
    }

    func runLines(_ arguments: [String], environment: [String: String]?, line: @escaping @Sendable (String) -> Void)
        async throws -> Int32
    {
        try await traced(arguments) {
            try await inner.runLines(arguments, environment: environment, line: line)
        }
    }

    func spawnDetached(_ arguments: [String], environment: [String: String]?, output: String?) throws -> Int32 {
        let pid = try inner.spawnDetached(arguments, environment: environment, output: output)
        logger.debug("\(Self.name(arguments)) detached pid \(pid)")
        return pid
    }
}
