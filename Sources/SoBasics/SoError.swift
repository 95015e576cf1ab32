import Foundation

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
