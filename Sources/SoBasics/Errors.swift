import Foundation

/// Where something came from: a file and, when known, a line (1-based) and column.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?

    public init(file: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String {
        if let line { return "\(file):\(line)" }
        return file
    }
}

/// The one error type `so` shows to people: one lowercase line naming the file:line or object,
/// and a hint with the fix. Library code throws it; only `main` turns it into an exit code.
public struct SoError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var location: SourceLocation?
    /// Process exit code when this error ends the program.
    public var exitCode: Int32
    /// The program that is not installed, when that is the error: callers that can do without it (no
    /// kind: no kind clusters) test this, never the message.
    public var missingProgram: String?

    /// Exit codes scripts can tell apart (README: "Exit codes").
    public static let exitFailure: Int32 = 1
    /// A command-line usage error (sysexits' EX_USAGE, as ArgumentParser's own validation errors).
    public static let exitUsage: Int32 = 64
    public static let exitUnreachable: Int32 = 69
    public static let exitTimeout: Int32 = 124

    public init(_ message: String, hint: String? = nil, at location: SourceLocation? = nil, exitCode: Int32 = 1) {
        self.message = message
        self.hint = hint
        self.location = location
        self.exitCode = exitCode
    }

    /// `program` is not on PATH.
    public static func notInstalled(_ program: String, hint: String) -> SoError {
        var e = SoError("\(program) is not installed (not found on PATH)", hint: hint)
        e.missingProgram = program
        return e
    }

    /// A command line `so` cannot act on (a bad flag value, a missing or conflicting option): exit 64.
    public static func usage(_ message: String, hint: String? = nil) -> SoError {
        SoError(message, hint: hint, exitCode: exitUsage)
    }

    /// The single `error:` line (without the `error: ` prefix).
    public var line: String {
        let text = message.replacingOccurrences(of: "\n", with: " ")
        if let location { return "\(location): \(text)" }
        return text
    }

    public var description: String {
        var out = "error: \(line)"
        if let hint { out += "\nhint: \(hint.replacingOccurrences(of: "\n", with: " "))" }
        return out
    }
}

/// A warning that does not stop the work (unknown keys, defaults that were filled in …).
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var location: SourceLocation?

    public init(_ message: String, hint: String? = nil, at location: SourceLocation? = nil) {
        self.message = message
        self.hint = hint
        self.location = location
    }

    public var description: String {
        var out = "warning: "
        if let location { out += "\(location): " }
        out += message
        if let hint { out += " (\(hint))" }
        return out
    }
}

/// Collects warnings while files are read; thread-safe so it can be shared across tasks.
public final class DiagnosticSink: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Diagnostic] = []

    public init() {}

    public func warn(_ diagnostic: Diagnostic) {
        lock.lock(); defer { lock.unlock() }
        if !items.contains(diagnostic) { items.append(diagnostic) }
    }

    public func warn(_ message: String, hint: String? = nil, at location: SourceLocation? = nil) {
        warn(Diagnostic(message, hint: hint, at: location))
    }

    public var all: [Diagnostic] {
        lock.lock(); defer { lock.unlock() }
        return items
    }

    /// A sink nobody reads: for a file read again after a read that gave its warnings already, or a probe
    /// whose warnings are not about what was asked. `why` says which, at the call (nothing else uses it).
    public static func dropped(_ why: StaticString) -> DiagnosticSink { DiagnosticSink() }
}

/// "Did you mean" support: the closest candidate within a small edit distance.
public enum Suggest {
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let limit = max(1, min(3, word.count / 3 + 1))
        var best: (String, Int)?
        for c in candidates {
            let d = distance(word.lowercased(), c.lowercased())
            if d <= limit, d < best?.1 ?? Int.max { best = (c, d) }
        }
        return best?.0
    }

    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        var cur = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    cur[j] = min(cur[j], prev[j - 1]) // transposition (approximate)
                }
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }
}
