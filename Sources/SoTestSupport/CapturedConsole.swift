import Foundation
import SoBasics
import SoSystem

/// A console that keeps what was printed.
public final class CapturedConsole: Console, @unchecked Sendable {
    private let lock = NSLock()
    private var outLines: [String] = []
    private var errLines: [String] = []
    private var statusLines: [String] = []
    public let isTerminal: Bool

    public init(isTerminal: Bool = false) { self.isTerminal = isTerminal }

    public func out(_ line: String) {
        lock.lock()
        outLines.append(line)
        lock.unlock()
    }
    public func err(_ line: String) {
        lock.lock()
        errLines.append(line)
        lock.unlock()
    }
    public func status(_ line: String) {
        lock.lock()
        statusLines.append(line)
        lock.unlock()
    }
    /// Answers `ask` gives, in order, as a person at a terminal would; with none left, `ask` is a test failure.
    public var answers: [String]? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return pendingAnswers
        }
        set {
            lock.lock()
            pendingAnswers = newValue
            lock.unlock()
        }
    }
    private var pendingAnswers: [String]?
    public private(set) var questions: [String] = []
    public func ask(_ question: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard var a = pendingAnswers else { return nil }
        questions.append(question)
        precondition(!a.isEmpty, "CapturedConsole: unexpected question: \(question)")
        let answer = a.removeFirst()
        pendingAnswers = a
        return answer
    }
    /// Transient lines shown on a terminal (never part of stdout).
    public var statuses: [String] {
        lock.lock()
        defer { lock.unlock() }
        return statusLines
    }

    public var stdout: String {
        lock.lock()
        defer { lock.unlock() }
        return outLines.joined(separator: "\n")
    }
    public var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return errLines.joined(separator: "\n")
    }
    public var stderrLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return errLines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }
}
