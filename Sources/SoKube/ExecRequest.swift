import Foundation
import SoBasics

/// A command run in a container through the API server's `pods/exec` (what `kubectl exec` does, without kubectl).
public struct ExecRequest: Sendable {
    public var namespace: String
    public var pod: String
    public var container: String
    /// The program and its arguments (no shell between, as `kubectl exec -- …`).
    public var command: [String]
    public var stdin: ExecInput
    /// Told of each chunk of output as it arrives (`true`: standard output, `false`: standard error); nil: the
    /// output is captured in the outcome.
    public var output: (@Sendable (_ stdout: Bool, _ chunk: Data) -> Void)?
    /// Seconds the command may take; past them its connection is closed and the exec fails. nil: no bound.
    public var timeout: Double?

    public init(
        namespace: String, pod: String, container: String, command: [String], stdin: ExecInput = .none,
        output: (@Sendable (_ stdout: Bool, _ chunk: Data) -> Void)? = nil, timeout: Double? = nil
    ) {
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.command = command
        self.stdin = stdin
        self.output = output
        self.timeout = timeout
    }
}

/// The query of a `pods/exec` request: the container, each word of the command, and the streams wanted.
public func execQuery(_ r: ExecRequest) -> String {
    var fields = [("container", r.container)] + r.command.map { ("command", $0) }
    if r.stdin != .none { fields.append(("stdin", "true")) }
    fields += [("stdout", "true"), ("stderr", "true")]
    return fields.map { "\($0.0)=\(PercentEncoding.component($0.1))" }.joined(separator: "&")
}
