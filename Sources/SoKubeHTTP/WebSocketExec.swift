import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOWebSocket
import SoBasics
import SoKube

/// `pods/exec` over a WebSocket, as kubectl speaks it: `v5.channel.k8s.io` (stdin's end signalled on channel 255),
/// or `v4.channel.k8s.io` for a command that reads no stdin. Each binary message's first byte names its stream: 0
/// stdin, 1 stdout, 2 stderr, 3 the command's end (a `Status`). One connection per exec, straight to the server (a
/// configured proxy makes `exec` answer nil: the caller runs kubectl).
extension HTTPClusterClient {
    enum ExecAttempt {
        case ran(ExecOutcome)
        case refused(status: Int, body: Data)
    }

    public func exec(_ request: ExecRequest) async throws -> ExecOutcome? {
        guard let (host, port, secure, prefix) = webSocketEndpoint() else { return nil }
        let began = DispatchTime.now().uptimeNanoseconds
        let path = prefix + Self.podPath(request.namespace, request.pod) + "/exec?" + execQuery(request)
        let address = host
        let attempts: @Sendable () async throws -> ExecAttempt = {
            let used = try await self.credentials.current()
            let attempt = try await self.execOnce(request, path: path, used, host: address, port: port, secure: secure)
            guard case .refused(401, _) = attempt, let fresh = try await self.credentials.afterUnauthorized(used)
            else { return attempt }
            return try await self.execOnce(request, path: path, fresh, host: address, port: port, secure: secure)
        }
        let attempt: ExecAttempt
        if let timeout = request.timeout {
            guard let bounded = try await Deadline.within(timeout, attempts) else {
                logger.debug("EXEC \(request.namespace)/\(request.pod) timed out")
                throw SoError(
                    "the command in pod \(request.namespace)/\(request.pod) did not finish within "
                        + "\(String(format: "%g", timeout)) s and was stopped",
                    hint: "run it by hand to see why it hangs: "
                        + CommandText.brief(
                            ["kubectl", "exec", "-n", request.namespace, request.pod, "-c", request.container, "--"]
                                + request.command))
            }
            attempt = bounded
        } else {
            attempt = try await attempts()
        }
        let ms = (DispatchTime.now().uptimeNanoseconds - began) / 1_000_000
        switch attempt {
        case .ran(let outcome):
            logger.debug("EXEC \(request.namespace)/\(request.pod) \(ms)ms exit \(outcome.exitCode)")
            return outcome
        case .refused(let status, let body):
            logger.debug("EXEC \(request.namespace)/\(request.pod) \(status) \(ms)ms")
            // Not a Kubernetes answer (a server that speaks none of the offered protocols refuses the upgrade
            // with an empty 403 before anything runs): kubectl, which knows older ones, does it.
            guard (try? JSON.parse(body))?["kind"]?.string == "Status" else { return nil }  // not JSON: as above
            return ExecOutcome.refused(status: status, body: body)
        }
    }

    /// The protocols offered: only v5 when stdin is sent (v4 cannot say where it ends).
    static func execProtocols(_ input: ExecInput) -> String {
        input == .none ? "v5.channel.k8s.io, v4.channel.k8s.io" : "v5.channel.k8s.io"
    }

    /// A pod's path, whose subresources (`exec`, `portforward`) the WebSockets are to.
    static func podPath(_ namespace: String, _ pod: String) -> String {
        "/api/v1/namespaces/\(PercentEncoding.component(namespace))/pods/\(PercentEncoding.component(pod))"
    }

    /// Where a WebSocket to the server goes: its host, port, whether TLS, and the path every request starts with (a
    /// server URL with a path, a proxy in front of several clusters, keeps it); nil behind a configured proxy (the
    /// caller runs kubectl, or does without).
    func webSocketEndpoint() -> (host: String, port: Int, secure: Bool, prefix: String)? {
        guard !proxied, let url = URLComponents(string: server), var host = url.host,
            let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http"
        else { return nil }
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        let secure = scheme == "https"
        let prefix =
            url.percentEncodedPath.hasSuffix("/") ? String(url.percentEncodedPath.dropLast()) : url.percentEncodedPath
        return (host, url.port ?? (secure ? 443 : 80), secure, prefix)
    }

    func execOnce(
        _ request: ExecRequest, path: String, _ used: RequestCredentials, host: String, port: Int, secure: Bool
    ) async throws -> ExecAttempt {
        let channel = try await webSocket(
            path: path, protocols: Self.execProtocols(request.stdin), used, host: host, port: port, secure: secure,
            purpose: "to run a command in pod \(request.namespace)/\(request.pod)")
        do {
            return .ran(try await Self.session(channel, request))
        } catch let refusal as ExecHandshake.Refusal {
            return .refused(status: refusal.status, body: refusal.body)
        }
    }

    /// A WebSocket to `path` offering `protocols`, connected (its 101 still to come: `ExecChannel.upgraded`).
    /// `purpose` ends the error that says the server cannot be reached.
    func webSocket(
        path: String, protocols: String, _ used: RequestCredentials, host: String, port: Int, secure: Bool,
        purpose: String
    ) async throws -> ExecChannel {
        var headers = [
            ("Host", hostHeader ?? (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")),
            ("User-Agent", "so"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Protocol", protocols),
        ]
        if let authorization = used.authorization { headers.append(("Authorization", authorization)) }
        headers += connection.impersonation?.headers ?? []
        let head = ExecHandshake.head(path: path, headers: headers)
        let context = try secure ? execTLSContext(used) : nil
        let sni = context == nil ? nil : serverName(host)
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configureExec(channel, head: head, tls: context, serverName: sni)
                    }
                }
        } catch {
            throw SoError(
                "cannot reach the API server \(server) \(purpose): \(error)",
                hint: "check that the cluster runs ('kubectl cluster-info' with the same kubeconfig and context)",
                exitCode: SoError.exitUnreachable)
        }
    }

    /// The TLS context of an exec: the client certificate of the credentials used (an exec plugin's), else the
    /// kubeconfig's.
    func execTLSContext(_ used: RequestCredentials) throws -> NIOSSLContext {
        if let cert = used.clientCertificatePEM, let key = used.clientKeyPEM {
            return try NIOSSLContext(configuration: try tlsConfiguration(certificate: cert, key: key))
        }
        return try sslContext()
    }

    /// The name TLS sends (SNI) and checks the certificate against: `tls-server-name` when set, else the server's
    /// host; none for an address (as AsyncHTTPClient: the chain is still verified) or when verification is off.
    func serverName(_ host: String) -> String? {
        if connection.insecureSkipTLSVerify { return nil }
        let name = connection.tlsServerName ?? host
        let isAddress = name.contains(":") || name.split(separator: ".").allSatisfy { UInt8($0) != nil }
        return isAddress ? nil : name
    }

    /// One pipeline from the start, changed by nothing after: TLS, the handshake (which passes on every byte after
    /// a 101, the server's first frames among them, and fails the channel with any other answer), the WebSocket
    /// frames. Nothing the server sends between its 101 and its close is lost in an upgrade's hand-over (NIO's
    /// typed upgrader, tried first, lost the first frames when the server's close came with them).
    static func configureExec(_ channel: Channel, head: ByteBuffer, tls: NIOSSLContext?, serverName: String?)
        throws -> ExecChannel
    {
        let pipeline = channel.pipeline.syncOperations
        if let tls { try pipeline.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName)) }
        let upgrade = channel.eventLoop.makePromise(of: Void.self)
        try pipeline.addHandler(ExecHandshake(request: head, upgrade: upgrade))
        try pipeline.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 24)))
        try pipeline.addHandler(WebSocketFrameEncoder())
        return ExecChannel(
            frames: try NIOAsyncChannel(wrappingChannelSynchronously: channel), upgraded: upgrade.futureResult)
    }

    /// An exec's connection: its frames, and the 101 that has to come before any is sent.
    struct ExecChannel: Sendable {
        var frames: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
        var upgraded: EventLoopFuture<Void>
    }

    /// The exec's streams: stdin sent (and its end said) while stdout and stderr are read, until the server
    /// closes after the command's status.
    static func session(_ channel: ExecChannel, _ request: ExecRequest) async throws -> ExecOutcome {
        let reader = ExecStreams(output: request.output)
        let upgraded = channel.upgraded
        try await channel.frames.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                if request.stdin != .none {
                    group.addTask {
                        try await upgraded.get()
                        try await sendStdin(request.stdin, outbound)
                    }
                }
                try await readFrames(inbound, outbound) { bytes, first in
                    reader.take(bytes, first: first)
                    return false
                }
                group.cancelAll()
            }
        }
        return reader.outcome()
    }

    /// Stdin in frames of at most 64 KiB on channel 0 (`sendData`), then its end (channel 255, stream 0).
    static func sendStdin(_ input: ExecInput, _ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>) async throws {
        switch input {
        case .none: break
        case .bytes(let data): try await sendData(ExecInput.Payload(bytes: data), outbound)
        case .later(let later): try await sendData(await later.payload, outbound)
        }
        try await send(255, [0], outbound)
    }

    /// `payload` on channel 0, in frames of at most 64 KiB: its bytes, then its file's (streamed, never held whole).
    static func sendData(
        _ payload: ExecInput.Payload, _ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    ) async throws {
        var offset = 0
        while offset < payload.bytes.count {
            let end = min(offset + (1 << 16), payload.bytes.count)
            try await send(0, payload.bytes[offset..<end], outbound)
            offset = end
        }
        guard let file = payload.file else { return }
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw SoError("cannot read \(file) to send it", hint: "check that it exists")
        }
        defer { try? handle.close() }  // read to its end already: a close that fails loses nothing
        while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty { try await send(0, chunk, outbound) }
    }

    /// One binary message: the channel's byte, then `bytes`.
    static func send(
        _ channel: UInt8, _ bytes: some Collection<UInt8>, _ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    ) async throws {
        var buffer = ByteBuffer()
        buffer.writeInteger(channel)
        buffer.writeBytes(bytes)
        try await outbound.write(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: buffer))
    }

    /// The server's frames, each binary one's bytes to `take` (with whether it begins a message) until it says it has
    /// what it needs, or the server closes; pings answered.
    static func readFrames(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>,
        _ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>,
        take: (ByteBuffer, Bool) -> Bool
    ) async throws {
        for try await frame in inbound {
            switch frame.opcode {
            case .binary, .continuation: if take(frame.unmaskedData, frame.opcode == .binary) { return }
            case .ping:
                try await outbound.write(
                    WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
            case .connectionClose: return
            default: continue
            }
        }
    }
}
