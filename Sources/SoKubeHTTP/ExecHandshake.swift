import Foundation
import NIOCore

/// The client's side of an exec's WebSocket handshake, as the first handler after TLS: it writes the upgrade
/// request when the connection opens, reads the answer's head, and after a 101 passes every later byte on (the
/// server's first frames may come in the same read). Any other answer is read to its end (its Content-Length, or
/// the connection's close) and fails the channel with a `Refusal` carrying its status and body.
final class ExecHandshake: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// An answer that is not a 101 (status 0: the connection closed before a whole head came).
    struct Refusal: Error {
        var status: Int
        var body: Data
    }

    private let request: ByteBuffer
    /// Succeeds on the 101: nothing is to be sent before it (a server refuses a client that sends data before the
    /// handshake is complete).
    let upgrade: EventLoopPromise<Void>
    private var buffer = ByteBuffer()
    private var upgraded = false
    private var ended = false
    /// The refusal's status, its body's length (nil: read to the close) and whether it comes in chunks, once its
    /// head is read.
    private var refusal: (status: Int, length: Int?, chunked: Bool)?

    init(request: ByteBuffer, upgrade: EventLoopPromise<Void>) {
        self.request = request
        self.upgrade = upgrade
    }

    /// The request's head: `GET path`, then each header (a CR or LF in a value is dropped, never a new line).
    static func head(path: String, headers: [(String, String)]) -> ByteBuffer {
        var text = "GET \(path) HTTP/1.1\r\n"
        for (name, value) in headers {
            text += "\(name): \(value.filter { $0 != "\r" && $0 != "\n" })\r\n"
        }
        return ByteBuffer(string: text + "\r\n")
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(request), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if upgraded {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        buffer.writeBuffer(&bytes)
        if refusal == nil {
            guard let end = buffer.readableBytesView.firstRange(of: [13, 10, 13, 10]) else { return }
            let head = buffer.readString(length: end.upperBound - buffer.readableBytesView.startIndex) ?? ""
            let lines = head.split(separator: "\r\n")
            let status = lines.first.flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
            if status == 101 {
                upgraded = true
                upgrade.succeed(())
                if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
                buffer = ByteBuffer()
                return
            }
            func header(_ name: String) -> String? {
                lines.dropFirst().first { $0.lowercased().hasPrefix(name + ":") }.map {
                    $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
                }
            }
            let chunked = header("transfer-encoding")?.lowercased().contains("chunked") == true
            refusal = (status ?? 0, header("content-length").flatMap { Int($0) }, chunked)
        }
        guard let r = refusal else { return }
        if let n = r.length, buffer.readableBytes >= n { fail(context) }
        if r.chunked, let body = Self.dechunked(buffer.readableBytesView) {
            buffer = ByteBuffer(bytes: body)
            fail(context)
        }
    }

    /// A whole chunked body without its framing; nil while its last chunk has not come.
    static func dechunked(_ bytes: ByteBufferView) -> [UInt8]? {
        var rest = Array(bytes)[...]
        var body: [UInt8] = []
        while let end = rest.firstRange(of: [13, 10]) {
            let sizeLine = String(decoding: rest[..<end.lowerBound], as: UTF8.self)
            // A size line that is no hexadecimal number (an empty one too) ends what is read of the body.
            let sizeText = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return body }
            if size == 0 { return body }
            let start = end.upperBound
            guard rest.count >= start - rest.startIndex + size + 2 else { return nil }
            body += rest[start..<start + size]
            rest = rest[(start + size + 2)...]
        }
        return nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !upgraded { fail(context) }
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext) {
        guard !ended else { return }
        ended = true
        let body = Data(buffer.readableBytesView.prefix(refusal?.length ?? (1 << 20)))
        let refused = Refusal(status: refusal?.status ?? 0, body: body)
        upgrade.fail(refused)
        context.fireErrorCaught(refused)
        context.close(promise: nil)
    }
}
