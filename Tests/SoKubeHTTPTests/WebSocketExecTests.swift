import Foundation
import NIOCore
import SoBasics
import SoKube
import Testing

@testable import SoKubeHTTP

/// `exec` through the API server as kubectl speaks it, against a server that answers byte by byte.
@Suite struct WebSocketExecTests {
    /// The server a run made, for a test's stdin made later to look at.
    final class ServerBox: @unchecked Sendable {
        private let lock = NSLock()
        private var made: ExecServer?
        var server: ExecServer? {
            get { lock.withLock { made } }
            set { lock.withLock { made = newValue } }
        }
    }

    func run(_ answer: ExecServer.Answer, _ request: ExecRequest, path: String = "", made: ServerBox? = nil)
        async throws -> (ExecOutcome?, ExecServer)
    {
        let server = ExecServer(answer)
        made?.server = server
        let port = try server.start()
        defer { server.stop() }
        let client = try HTTPClusterClient(
            ClusterConnection(contextName: "test", server: "http://127.0.0.1:\(port)\(path)", token: "t0ken"))
        let outcome = try await client.exec(request)
        await client.shutdown()
        return (outcome, server)
    }

    static let request = ExecRequest(
        namespace: "ns", pod: "p-1", container: "agent", command: ["sh", "-c", "echo a+b && x=1 & y", "so", "é"])

    @Test func theHandshakeKnowsSHA1() {
        // RFC 6455's own example: the key and the accept value it gives.
        let accept = Data(SHA1.digest(Array("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8)))
        #expect(accept.base64EncodedString() == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// The frames that come in the same read as the 101 are the command's first output: none is dropped.
    @Test func outputThatComesWithTheUpgradeIsKept() async throws {
        let (outcome, server) = try await run(
            .frames([
                (1, ""), (2, ""), (1, "branch=agent/x\n"), (2, "a warning\n"), (1, "head=abc\n"),
                (3, #"{"metadata":{},"status":"Success"}"#),
            ]), Self.request)
        let o = try #require(outcome)
        #expect(o.exitCode == 0)
        #expect(String(decoding: o.stdout, as: UTF8.self) == "branch=agent/x\nhead=abc\n")
        #expect(String(decoding: o.stderr, as: UTF8.self) == "a warning\n")
        let head = try #require(server.heads.first)
        // Every word is one `command` field, percent-encoded: a `+` is not a space, an `&` not the next field.
        #expect(
            head.hasPrefix(
                "GET /api/v1/namespaces/ns/pods/p-1/exec?container=agent&command=sh&command=-c"
                    + "&command=echo%20a%2Bb%20%26%26%20x%3D1%20%26%20y&command=so&command=%C3%A9&stdout=true&stderr=true "
            ),
            "\(head)")
        #expect(head.contains("Authorization: Bearer t0ken"))
        #expect(head.contains("Sec-WebSocket-Protocol: v5.channel.k8s.io, v4.channel.k8s.io"))
    }

    /// A server URL with a path (a proxy in front of several clusters) keeps it, as every other request does.
    @Test func aServerPathIsKept() async throws {
        let (outcome, server) = try await run(
            .frames([(UInt8(3), #"{"status":"Success"}"#)]), Self.request, path: "/k8s/clusters/c-1/")
        #expect(outcome?.exitCode == 0)
        #expect(server.heads.first?.hasPrefix("GET /k8s/clusters/c-1/api/v1/namespaces/ns/pods/p-1/exec?") == true)
    }

    @Test func aNonZeroExitIsTheCommandsCode() async throws {
        let status = """
            {"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 7",\
            "reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}}
            """
        let (outcome, _) = try await run(.frames([(UInt8(2), "no\n"), (UInt8(3), status)]), Self.request)
        #expect(outcome == ExecOutcome(exitCode: 7, stderr: Data("no\n".utf8)))
    }

    /// A failure that is not the command's (the program not found) is exit 1 with its message, as kubectl says it.
    @Test func aFailureToStartIsNamed() async throws {
        let status =
            #"{"status":"Failure","message":"exec: \"nope\": executable file not found","reason":"InternalError"}"#
        let (outcome, _) = try await run(.frames([(UInt8(3), status)]), Self.request)
        let o = try #require(outcome)
        #expect(o.exitCode == 1 && o.result.stderr == "error: exec: \"nope\": executable file not found\n")
    }

    /// A pod that is gone reads as kubectl says it (the callers look the pod up again on these words).
    @Test func aPodThatIsGoneIsToldInKubectlsWords() async throws {
        let body =
            #"{"kind":"Status","status":"Failure","message":"pods \"p-1\" not found","reason":"NotFound","code":404}"#
        let (outcome, _) = try await run(.refuse(status: 404, body: body), Self.request)
        let o = try #require(outcome)
        #expect(o.exitCode == 1 && o.result.stderr == "Error from server (NotFound): pods \"p-1\" not found\n")
    }

    /// A refusal in chunks on a connection left open is read to its last chunk, not to a close that never comes.
    @Test func aChunkedRefusalIsReadToItsEnd() async throws {
        let body =
            #"{"kind":"Status","status":"Failure","message":"pods \"p-1\" is forbidden: no","reason":"Forbidden"}"#
        let (outcome, _) = try await run(.refuseChunked(status: 403, body: body), Self.request)
        #expect(outcome?.result.stderr == "Error from server (Forbidden): pods \"p-1\" is forbidden: no\n")
    }

    /// A refusal that is not the API server's (a server that speaks none of the protocols refuses the upgrade
    /// with an empty 403, before anything runs): nil, and the caller runs kubectl.
    @Test func aServerThatSpeaksNoOfferedProtocolLeavesItToKubectl() async throws {
        let (outcome, _) = try await run(.refuse(status: 403, body: ""), Self.request)
        #expect(outcome == nil)
    }

    /// Stdin goes on channel 0, only v5 is offered (v4 cannot end it), and its end is said on channel 255.
    @Test func stdinIsSentAndEnded() async throws {
        let bytes = Data((0..<70_000).map { UInt8($0 % 251) })
        var request = Self.request
        request.stdin = .bytes(bytes)
        let (outcome, server) = try await run(.echoStdin, request)
        let o = try #require(outcome)
        #expect(o.exitCode == 0 && o.stdout == bytes && server.received == bytes)
        let head = try #require(server.heads.first)
        #expect(head.contains("&stdin=true&") && head.contains("Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n"))
    }

    /// Stdin known only later is sent once it is, on a connection made before: the bytes here are made only after the
    /// server saw the exec's request (a client that waited for them first would never connect: the time limit ends it).
    @Test(.timeLimit(.minutes(1))) func stdinKnownLaterGoesOnTheConnectionMadeBefore() async throws {
        let bytes = Data("abc123 trunk\nexport A='b'\n".utf8)
        let made = ServerBox()
        var request = Self.request
        request.stdin = .later(
            ExecInput.Later {
                while made.server?.heads.isEmpty ?? true { try? await Task.sleep(for: .milliseconds(5)) }
                return bytes
            })
        let (outcome, server) = try await run(.echoStdin, request, made: made)
        let o = try #require(outcome)
        #expect(o.exitCode == 0 && o.stdout == bytes && server.received == bytes)
    }

    /// Stdin known later can be bytes then a file's (a bundle after its header line): both go, in that order, the
    /// file's in frames of 64 KiB (here 200 KiB of it, so more than one).
    @Test(.timeLimit(.minutes(1))) func stdinKnownLaterCanEndWithAFile() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("so-ws-later-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("repo.bundle")
        let body = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try body.write(to: file)
        let header = Data("abc123 def456\n".utf8)
        var request = Self.request
        request.stdin = .later(
            ExecInput.Later(streaming: { ExecInput.Payload(bytes: header, file: file.path) }))
        let (outcome, server) = try await run(.echoStdin, request)
        let o = try #require(outcome)
        #expect(o.exitCode == 0 && server.received == header + body && o.stdout == header + body)
    }

    /// Output told as it comes goes to the caller, not into the outcome.
    @Test func outputCanBeToldAsItComes() async throws {
        let seen = Seen()
        var request = Self.request
        request.output = { stdout, bytes in seen.add(stdout, bytes) }
        let (outcome, _) = try await run(
            .frames([(1, "one\n"), (2, "two\n"), (3, #"{"status":"Success"}"#)]), request)
        #expect(outcome == ExecOutcome(exitCode: 0))
        #expect(seen.all == ["out: one\n", "err: two\n"])
    }

    /// A refusal's chunked body as a server may garble it: an empty size line ends the body, and nothing fails.
    @Test func aGarbledChunkedBodyIsReadAsFarAsItGoes() {
        let bytes = ByteBuffer(string: "3\r\nabc\r\n\r\nzz")
        #expect(ExecHandshake.dechunked(bytes.readableBytesView) == Array("abc".utf8))
        #expect(ExecHandshake.dechunked(ByteBuffer(string: "\r\n").readableBytesView) == [])
    }

    /// A command that never ends is stopped at its timeout (as kubectl is), and named with how to see why.
    @Test(.timeLimit(.minutes(1))) func aHungCommandIsStoppedAtItsTimeout() async throws {
        var request = Self.request
        request.timeout = 0.3
        let error = await #expect(throws: SoError.self) { try await run(.hang, request) }
        #expect(error?.message == "the command in pod ns/p-1 did not finish within 0.3 s and was stopped")
        #expect(
            error?.hint?.hasPrefix("run it by hand to see why it hangs: kubectl exec -n ns p-1 -c agent -- sh") == true)
    }

    /// A proxy between: nil (kubectl, which speaks to proxies, runs the command).
    @Test func aProxyLeavesItToKubectl() async throws {
        let client = try HTTPClusterClient(
            ClusterConnection(contextName: "test", server: "https://k:6443", proxyURL: "http://127.0.0.1:9"))
        #expect(try await client.exec(Self.request) == nil)
        await client.shutdown()
    }
}

final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [String] = []
    func add(_ stdout: Bool, _ bytes: Data) {
        lock.withLock { chunks.append((stdout ? "out: " : "err: ") + String(decoding: bytes, as: UTF8.self)) }
    }
    var all: [String] { lock.withLock { chunks } }
}
