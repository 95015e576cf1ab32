import Foundation
import NIOCore
import NIOPosix

/// A loopback HTTP CONNECT proxy: records each CONNECT (target and Proxy-Authorization), dials the target
/// (host names mapped through `hosts`, so `kube.test` can mean 127.0.0.1), answers 200 and pipes bytes both ways.
final class ConnectProxy: @unchecked Sendable {
    struct Connect: Equatable {
        var target: String
        var authorization: String?
    }

    private let lock = NSLock()
    private var recorded: [Connect] = []
    private let hosts: [String: String]
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?

    init(hosts: [String: String] = [:]) { self.hosts = hosts }

    var connects: [Connect] { lock.withLock { recorded } }

    func start() throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in channel.pipeline.addHandler(Inbound(proxy: self)) }
        let ch = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        channel = ch
        guard let port = ch.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return port
    }

    func stop() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    fileprivate func record(_ c: Connect) -> String? {
        lock.withLock { recorded.append(c) }
        let host = c.target.split(separator: ":").dropLast().joined(separator: ":")
        return hosts[host] ?? host
    }

    /// The client's side: reads the CONNECT head, then forwards everything to the target.
    final class Inbound: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let proxy: ConnectProxy
        var head = ByteBuffer()
        var upstream: Channel?
        var waiting: [ByteBuffer]?
        init(proxy: ConnectProxy) { self.proxy = proxy }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if let upstream {
                upstream.writeAndFlush(bytes, promise: nil)
                return
            }
            if waiting != nil {
                waiting?.append(bytes)
                return
            }
            head.writeBuffer(&bytes)
            let view = head.readableBytesView
            guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let text = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
            head.moveReaderIndex(to: end.upperBound)
            let lines = text.components(separatedBy: "\r\n")
            let first = lines[0].split(separator: " ").map(String.init)
            let auth = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
                .map { String($0.dropFirst(20)).trimmingCharacters(in: .whitespaces) }
            let inbound = context.channel
            guard first.count == 3, first[0] == "CONNECT",
                let port = first[1].split(separator: ":").last.flatMap({ Int($0) }),
                let host = proxy.record(Connect(target: first[1], authorization: auth))
            else {
                refuse(inbound, "405 Method Not Allowed")
                return
            }
            waiting = head.readableBytes > 0 ? [head] : []
            ClientBootstrap(group: context.eventLoop)
                .channelInitializer { up in up.pipeline.addHandler(Outbound(to: inbound)) }
                .connect(host: host, port: port)
                .whenComplete { result in
                    switch result {
                    case .success(let up):
                        inbound.writeAndFlush(
                            ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n"), promise: nil)
                        for b in self.waiting ?? [] { up.write(b, promise: nil) }
                        up.flush()
                        self.waiting = nil
                        self.upstream = up
                    case .failure:
                        refuse(inbound, "502 Bad Gateway")
                    }
                }
        }

        func channelInactive(context: ChannelHandlerContext) { upstream?.close(promise: nil) }
    }

    static func refuse(_ channel: Channel, _ status: String) {
        channel.writeAndFlush(ByteBuffer(string: "HTTP/1.1 \(status)\r\nContent-Length: 0\r\n\r\n")).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// The target's side: everything goes back to the client.
    final class Outbound: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let to: Channel
        init(to: Channel) { self.to = to }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            to.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }
        func channelInactive(context: ChannelHandlerContext) { to.close(promise: nil) }
    }
}
