import Foundation

/// The result of running a program to completion.
public struct ProcessResult: Sendable, Equatable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
    public init(exitCode: Int32, stdout: String = "", stderr: String = "") {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }
    /// The last non-empty line of stderr (or stdout), for one-line error messages: the last one that
    /// reads like an error, as git, kind and docker word them (their text is all there is to go on), else
    /// the last one. It only chooses what to show; no decision is made on it.
    public var lastErrorLine: String {
        let lines = (stderr + "\n" + stdout).split(separator: "\n").map { $0.trimmedSpaces }
        return lines.last(where: {
            !$0.isEmpty && ($0.lowercased().contains("fatal") || $0.lowercased().contains("error"))
        })
            ?? lines.last(where: { !$0.isEmpty }) ?? "exit code \(exitCode)"
    }
}
