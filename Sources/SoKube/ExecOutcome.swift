import Foundation
import SoBasics

/// How an exec ended: the command's exit code, and its output when it was captured. A failure to reach the
/// container (the pod gone, the container not running) is told as `kubectl exec` tells it: exit code 1 and
/// kubectl's words on standard error ("Error from server (NotFound): pods \"p\" not found"), so a caller reads
/// both the same way.
public struct ExecOutcome: Sendable, Equatable {
    public var exitCode: Int32
    public var stdout: Data
    public var stderr: Data

    public init(exitCode: Int32, stdout: Data = Data(), stderr: Data = Data()) {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }

    public var result: ProcessResult {
        ProcessResult(
            exitCode: exitCode, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The command's end as the exec's status channel says it (a `Status` object): Success is 0, NonZeroExitCode
    /// its code, anything else (the program not found, the container gone) 1 with the message, as kubectl words it.
    public static func ended(status: JSON?) -> (code: Int32, error: String?) {
        guard let status else { return (1, "error: the exec ended without its command's status") }
        if status["status"]?.string == "Success" { return (0, nil) }
        if status["reason"]?.string == "NonZeroExitCode",
            let cause = (status.at("details", "causes")?.array ?? []).first(where: {
                $0["reason"]?.string == "ExitCode"
            }),
            let code = cause["message"]?.string.flatMap({ Int32($0) }), code != 0  // a failure never ends with 0
        {
            return (code, nil)
        }
        return (1, "error: " + (status["message"]?.string ?? "the exec failed"))
    }

    /// kubectl's words for an exec the API server refused (`status`: the HTTP status, `body`: its answer).
    public static func refused(status: Int, body: Data) -> ExecOutcome {
        let parsed = try? JSON.parse(body)  // not a Status (a proxy's page): the status code is named instead
        let message = parsed?["message"]?.string ?? "the server answered \(status) to the exec"
        let reason = parsed?["reason"]?.string ?? "HTTP \(status)"
        return ExecOutcome(exitCode: 1, stderr: Data("Error from server (\(reason)): \(message)\n".utf8))
    }
}
