import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import SoBasics
import SoKube

/// `pods/portforward` over a WebSocket (`v4.channel.k8s.io`, as the kubelet speaks it): one connection to one port of
/// the pod's loopback. Each binary message's first byte names its stream: 0 the connection's data, 1 its errors (the
/// kubelet's words when nothing listens); the first two bytes the server sends on each stream name the port.
extension HTTPClusterClient {
    public func portForward(_ request: PortForwardRequest) async -> PortForwardOutcome? {
        guard let (host, port, secure, prefix) = webSocketEndpoint() else { return nil }
        let began = DispatchTime.now().uptimeNanoseconds
        let path = prefix + Self.podPath(request.namespace, request.pod) + "/portforward?ports=\(request.port)"
        let purpose = "to reach port \(request.port) of pod \(request.namespace)/\(request.pod)"
        let once: @Sendable (RequestCredentials) async throws -> PortForwardOutcome = { used in
            let channel = try await self.webSocket(
                path: path, protocols: "v4.channel.k8s.io", used, host: host, port: port, secure: secure,
                purpose: purpose)
            return try await Self.forwardSession(channel, send: request.send)
        }
        let outcome: PortForwardOutcome
        do {
            let bounded = try await Deadline.within(request.timeout) { () async throws -> PortForwardOutcome in
                let used = try await self.credentials.current()
                do { return try await once(used) } catch let refusal as ExecHandshake.Refusal
                    where refusal.status == 401
                {
                    guard let fresh = try await self.credentials.afterUnauthorized(used) else { throw refusal }
                    return try await once(fresh)
                }
            }
            outcome = bounded ?? .failed(why: "no answer within \(String(format: "%g", request.timeout)) s")
        } catch let refusal as ExecHandshake.Refusal {
            outcome = .failed(why: "the API server answered \(refusal.status)")
        } catch let e as SoError {
            outcome = .failed(why: e.message)
        } catch {
            outcome = .failed(why: "\(error)")
        }
        let ms = (DispatchTime.now().uptimeNanoseconds - began) / 1_000_000
        switch outcome {
        case .answered: logger.debug("PORTFORWARD \(request.namespace)/\(request.pod):\(request.port) \(ms)ms answered")
        case .failed(let why):
            logger.debug("PORTFORWARD \(request.namespace)/\(request.pod):\(request.port) \(ms)ms failed: \(why)")
        }
        return outcome
    }

    /// The connection's exchange: `send` written on stream 0 once the server upgraded (nothing to send: the connection
    /// closed), then stream 0 read up to its first newline (the answer), or stream 1's words when the kubelet could not
    /// connect.
    static func forwardSession(_ channel: ExecChannel, send: ExecInput.Later) async throws -> PortForwardOutcome {
        let upgraded = channel.upgraded
        var streams = ForwardStreams()
        try await channel.frames.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await upgraded.get()
                    let payload = await send.payload
                    guard payload.bytes.isEmpty && payload.file == nil else {
                        return try await sendData(payload, outbound)
                    }
                    // Nothing to send: the connection is closed at once (the server answers the close within a
                    // round trip; a listener left waiting for bytes kept it a second).
                    try await outbound.write(
                        WebSocketFrame(
                            fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [3, 232])))
                }
                try await readFrames(inbound, outbound) { bytes, first in streams.take(bytes, first: first) }
                group.cancelAll()
            }
        }
        return streams.outcome()
    }
}
