import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import SoBasics
import SoKube
import Testing

@testable import SoKubeHTTP

/// Whether a failed request is tried again is read from the error's type and errno, never its text.
@Suite(.serialized) struct TransportFailureTests {
    @Test func failuresAreReadFromTheErrorsType() {
        #expect(HTTPClusterClient.failure(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .refused)
        #expect(HTTPClusterClient.failure(IOError(errnoCode: ECONNRESET, reason: "read")) == .reset)
        #expect(HTTPClusterClient.failure(HTTPClientError.connectTimeout) == .timedOut)
        #expect(HTTPClusterClient.failure(HTTPClientError.remoteConnectionClosed) == .closed)
        #expect(HTTPClusterClient.failure(ChannelError.ioOnClosedChannel) == .closed)
        #expect(HTTPClusterClient.failure(NIOSSLError.unableToValidateCertificate) == .tls)
        #expect(
            HTTPClusterClient.failure(SocketAddressError.unknown(host: "nowhere.invalid", port: 6443)) == .noSuchHost)
        #expect(
            HTTPClusterClient.TransportFailure.refused.retryable && !HTTPClusterClient.TransportFailure.tls.retryable)
        #expect(
            !HTTPClusterClient.TransportFailure.noSuchHost.retryable
                && !HTTPClusterClient.TransportFailure.other.retryable)
        // An error whose text merely mentions a refused connection (or a certificate) decides nothing.
        struct Worded: Error, CustomStringConvertible { var description: String }
        #expect(HTTPClusterClient.failure(Worded(description: "connection refused")) == .other)
        #expect(HTTPClusterClient.failure(Worded(description: "certificate handshake tls")) == .other)
        #expect(HTTPClusterClient.hint(for: NIOSSLError.unableToValidateCertificate).contains("certificate"))
    }

    /// Nothing listens on the port: tried again briefly (refused is retryable), then one line, exit 69.
    @Test func aRefusedConnectionIsNamed() async throws {
        // A socket bound to the port but not listening holds it for this test (a server stopped instead left it
        // free, and another test's server that took it meanwhile answered): a connect to it is refused.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let c = try HTTPClusterClient(ClusterConnection(contextName: "test", server: "http://127.0.0.1:\(port)"))
        defer { Task { await c.shutdown() } }
        await #expect { _ = try await c.get(.namespace, name: "x", namespace: nil) } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message
                == "cannot reach the API server http://127.0.0.1:\(port) (context test): connection refused"
                && e.exitCode == SoError.exitUnreachable
        }
    }
}
