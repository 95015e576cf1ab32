import Foundation

/// Where output goes. Live: stdout/stderr; tests: captured.
public protocol Console: Sendable {
    func out(_ line: String)
    func err(_ line: String)
    /// A transient line on a terminal, replaced by the next status or output line.
    func status(_ line: String)
    /// Asks a question when both stdin and stdout are a terminal; nil otherwise (scripts, CI).
    func ask(_ question: String) -> String?
    var isTerminal: Bool { get }
    /// Bytes as a program wrote them (a command run in a container), to stdout or stderr, not a line of `so`'s.
    func write(_ bytes: Data, toStdout: Bool)
}

extension Console {
    /// The bytes as lines (a console that keeps lines, not bytes): each complete line, the rest as one.
    public func write(_ bytes: Data, toStdout: Bool) {
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        for line in lines { toStdout ? out(String(line)) : err(String(line)) }
    }
    public func status(_ line: String) {}
    public func ask(_ question: String) -> String? { nil }
}
