import Foundation
import NIOCore
import SoKube

/// A port-forward's two streams as they arrive: each one's port (its first two bytes) dropped, the data kept up to
/// its first newline, the errors kept whole (at most 4 KiB each: an answer is one short line).
struct ForwardStreams {
    private var stream: UInt8? = nil
    private var portLeft: [UInt8: Int] = [0: 2, 1: 2]
    private var data: [UInt8] = []
    private var errors: [UInt8] = []

    /// Takes a frame's bytes (`first`: a message's first frame, which names its stream); true once the data holds a
    /// whole line, or the kubelet said why it could not connect (it closes then).
    mutating func take(_ frame: ByteBuffer, first: Bool) -> Bool {
        var bytes = Array(frame.readableBytesView)
        if first {
            guard !bytes.isEmpty else { return false }
            stream = bytes.removeFirst()
        }
        guard let s = stream, s <= 1 else { return false }
        let skip = min(portLeft[s] ?? 0, bytes.count)
        portLeft[s, default: 0] -= skip
        bytes.removeFirst(skip)
        if s == 0 {
            data += bytes.prefix(max(0, 4096 - data.count))
            return data.contains(10)
        }
        errors += bytes.prefix(max(0, 4096 - errors.count))
        return !errors.isEmpty
    }

    /// The answer's first line, else why there is none.
    func outcome() -> PortForwardOutcome {
        if let end = data.firstIndex(of: 10) { return .answered(String(decoding: data[..<end], as: UTF8.self)) }
        let said = String(decoding: errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if !said.isEmpty { return .failed(why: said.split(separator: "\n").first.map(String.init) ?? said) }
        return .failed(why: "the connection closed without an answer")
    }
}
