import Foundation
import NIOCore
import SoBasics
import SoKube

/// What an exec's server said, stream by stream (a message may come in fragments: the first names the stream).
final class ExecStreams: @unchecked Sendable {
    private var stream: UInt8 = 0
    private var stdout = Data()
    private var stderr = Data()
    private var status = Data()
    private let output: (@Sendable (_ stdout: Bool, _ chunk: Data) -> Void)?

    init(output: (@Sendable (_ stdout: Bool, _ chunk: Data) -> Void)?) { self.output = output }

    func take(_ buffer: ByteBuffer, first: Bool) {
        var buffer = buffer
        if first {
            guard let s = buffer.readInteger(as: UInt8.self) else { return }
            stream = s
        }
        let bytes = Data(buffer.readableBytesView)
        guard !bytes.isEmpty else { return }
        switch stream {
        case 1, 2:
            if let output {
                output(stream == 1, bytes)
            } else if stream == 1 {
                stdout += bytes
            } else {
                stderr += bytes
            }
        case 3: status += bytes
        default: break
        }
    }

    func outcome() -> ExecOutcome {
        let parsed = status.isEmpty ? nil : try? JSON.parse(status)  // unreadable: "ended without its status"
        let (code, error) = ExecOutcome.ended(status: parsed)
        var err = stderr
        if let error {
            let line = Data((error + "\n").utf8)
            if let output { output(false, line) } else { err += line }
        }
        return ExecOutcome(exitCode: code, stdout: stdout, stderr: err)
    }
}
