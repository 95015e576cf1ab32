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
}

extension Console {
    public func status(_ line: String) {}
    public func ask(_ question: String) -> String? { nil }
}
