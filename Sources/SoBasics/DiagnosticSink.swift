import Foundation

/// Collects warnings while files are read; thread-safe so it can be shared across tasks.
public final class DiagnosticSink: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Diagnostic] = []

    public init() {}

    public func warn(_ diagnostic: Diagnostic) {
        lock.lock()
        defer { lock.unlock() }
        if !items.contains(diagnostic) { items.append(diagnostic) }
    }

    public func warn(_ message: String, hint: String? = nil, at location: SourceLocation? = nil) {
        warn(Diagnostic(message, hint: hint, at: location))
    }

    public var all: [Diagnostic] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    /// A sink nobody reads: for a file read again after a read that gave its warnings already, or a probe
    /// whose warnings are not about what was asked. `why` says which, at the call (nothing else uses it).
    public static func dropped(_ why: StaticString) -> DiagnosticSink { DiagnosticSink() }
}
