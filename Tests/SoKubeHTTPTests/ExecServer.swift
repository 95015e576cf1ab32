import Foundation
import NIOCore
import NIOPosix

/// A loopback server that speaks the API server's side of `pods/exec` over a WebSocket, byte by byte: it reads the
/// upgrade request, answers it with a 101 and, in the same write, the frames `answer` gives (so a client that
/// drops what came with the 101 loses them), or with a refusal. What the client sent on stdin is kept.
final class ExecServer: @unchecked Sendable {
    /// What the server answers: the frames (stream byte, then data) after the 101, or a refusal.
    enum Answer {
        case frames([(UInt8, String)])
        /// Answers stdin: after the client's end of stdin (channel 255), its bytes on stdout, then Success.
        case echoStdin
        case refuse(status: Int, body: String)
        /// A refusal whose body comes in two chunks, the connection left open (keep-alive).
        case refuseChunked(status: Int, body: String)
        /// A command that never ends: the 101, then nothing, the connection left open.
        case hang
    }

    private let lock = NSLock()
    private var requests: [String] = []
    private var stdin = Data()
    private let answer: Answer
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?

    init(_ answer: Answer) { self.answer = answer }

    /// The request heads received (request line and headers).
    var heads: [String] { lock.withLock { requests } }
    var received: Data { lock.withLock { stdin } }

    func start() throws -> Int {
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Connection(server: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        self.channel = channel
        return channel.localAddress?.port ?? 0
    }

    func stop() {
        try? channel?.close().wait()  // closed already: nothing to stop
        try? group.syncShutdownGracefully()  // a test's server: its threads end with the process anyway
    }

    /// A server frame (unmasked, binary) of `stream` then `text`.
    static func frame(_ stream: UInt8, _ bytes: [UInt8]) -> [UInt8] {
        let payload = [stream] + bytes
        var out: [UInt8] = [0x82]
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out += [127] + (0..<8).map { UInt8(truncatingIfNeeded: payload.count >> (56 - 8 * $0)) }
        }
        return out + payload
    }

    final class Connection: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let server: ExecServer
        var bytes: [UInt8] = []
        var upgraded = false
        init(server: ExecServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
            if !upgraded { head(context) }
            if upgraded { frames(context) }
        }

        func head(_ context: ChannelHandlerContext) {
            guard
                let end = bytes.indices.first(where: {
                    Array(bytes[$0..<min($0 + 4, bytes.count)]) == [13, 10, 13, 10]
                })
            else { return }
            let text = String(decoding: bytes[..<end], as: UTF8.self)
            bytes.removeFirst(end + 4)
            server.lock.withLock { server.requests.append(text) }
            let key =
                text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }.map {
                    $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
                } ?? ""
            var out: [UInt8] = []
            switch server.answer {
            case .refuse(let status, let body):
                out = Array(
                    "HTTP/1.1 \(status) No\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                        .utf8)
                write(context, out, close: true)
                return
            case .refuseChunked(let status, let body):
                let half = body.utf8.count / 2
                let (a, b) = (Array(body.utf8.prefix(half)), Array(body.utf8.dropFirst(half)))
                out = Array("HTTP/1.1 \(status) No\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                for part in [a, b] { out += Array("\(String(part.count, radix: 16))\r\n".utf8) + part + [13, 10] }
                write(context, out + Array("0\r\n\r\n".utf8), close: false)
                return
            case .hang:
                write(context, Self.switching(key), close: false)
            case .frames(let frames):
                out = Self.switching(key)
                for (stream, text) in frames { out += ExecServer.frame(stream, Array(text.utf8)) }
                write(context, out + [0x88, 0], close: true)
            case .echoStdin:
                // The 101 a moment later, as a busy server's: bytes sent before it are refused, as the API
                // server refuses them ("client sent data before handshake is complete").
                let loop = context.eventLoop
                let (box, handler) = (NIOLoopBound(context, eventLoop: loop), NIOLoopBound(self, eventLoop: loop))
                loop.scheduleTask(in: .milliseconds(100)) {
                    let (context, this) = (box.value, handler.value)
                    guard this.bytes.isEmpty else {
                        this.write(context, Array("HTTP/1.1 400 Early\r\nContent-Length: 0\r\n\r\n".utf8), close: true)
                        return
                    }
                    this.upgraded = true
                    this.write(context, Self.switching(key), close: false)
                }
            }
        }

        static func switching(_ key: String) -> [UInt8] {
            let accept = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                .base64EncodedString()
            return Array(
                ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n").utf8)
        }

        /// The client's frames (masked): stdin kept until its end, which is answered.
        func frames(_ context: ChannelHandlerContext) {
            while bytes.count >= 6 {
                var length = Int(bytes[1] & 0x7F)
                var at = 2
                if length == 126 {
                    guard bytes.count >= 8 else { return }
                    length = Int(bytes[2]) << 8 | Int(bytes[3])
                    at = 4
                } else if length == 127 {
                    guard bytes.count >= 14 else { return }
                    length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[$1]) }
                    at = 10
                }
                guard bytes.count >= at + 4 + length else { return }
                let mask = Array(bytes[at..<at + 4])
                let payload = (0..<length).map { bytes[at + 4 + $0] ^ mask[$0 % 4] }
                bytes.removeFirst(at + 4 + length)
                if payload.first == 0 {
                    server.lock.withLock { server.stdin += payload.dropFirst() }
                } else if payload == [255, 0] {
                    let data = Array(server.received)
                    let status = Array(#"{"metadata":{},"status":"Success"}"#.utf8)
                    write(context, ExecServer.frame(1, data) + ExecServer.frame(3, status) + [0x88, 0], close: true)
                }
            }
        }

        func write(_ context: ChannelHandlerContext, _ bytes: [UInt8], close: Bool) {
            let future = context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)))
            if close { future.whenComplete { _ in context.close(promise: nil) } }
        }
    }
}

/// SHA-1, for the WebSocket handshake's accept value only (RFC 3174).
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var m = message + [0x80]
        while m.count % 64 != 56 { m.append(0) }
        let bits = UInt64(message.count) * 8
        m += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        for chunk in stride(from: 0, to: m.count, by: 64) {
            var w = (0..<16).map { i in
                (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(m[chunk + 4 * i + $1]) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w.append(x << 1 | x >> 31)
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    i < 20
                    ? ((b & c) | (~b & d), 0x5A82_7999)
                    : i < 40
                        ? (b ^ c ^ d, 0x6ED9_EBA1)
                        : i < 60 ? ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC) : (b ^ c ^ d, 0xCA62_C1D6)
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e]
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    }
}
