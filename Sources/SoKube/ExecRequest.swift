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

    public init(
        namespace: String, pod: String, container: String, command: [String], stdin: ExecInput = .none,
        output: (@Sendable (_ stdout: Bool, _ chunk: Data) -> Void)? = nil
    ) {
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.command = command
        self.stdin = stdin
        self.output = output
    }
}

/// `s` with every byte but the unreserved ones (letters, digits, `-._~`) percent-encoded: safe in a path segment
/// and in a query value (a `+` read as a space, an `&` as the next field, is not).
public func percentEncoded(_ s: String) -> String {
    var out = ""
    for byte in s.utf8 {
        let unreserved =
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
        out += unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
    }
    return out
}

/// The query of a `pods/exec` request: the container, each word of the command, and the streams wanted.
public func execQuery(_ r: ExecRequest) -> String {
    var fields = [("container", r.container)] + r.command.map { ("command", $0) }
    if r.stdin != .none { fields.append(("stdin", "true")) }
    fields += [("stdout", "true"), ("stderr", "true")]
    return fields.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
}
