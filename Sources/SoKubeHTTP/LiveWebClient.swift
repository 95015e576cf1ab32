import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SoBasics

/// Web APIs other than the cluster (GitHub's, for pull requests) over AsyncHTTPClient, with the system's
/// trust roots. Headers are never logged: they carry tokens.
public struct LiveWebClient: WebClient {
    public init() {}

    public func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse {
        var r = HTTPClientRequest(url: request.url)
        r.method = HTTPMethod(rawValue: request.method)
        for (k, v) in request.headers { r.headers.add(name: k, value: v) }
        if let body = request.body { r.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await HTTPClient.shared.execute(r, timeout: .milliseconds(Int64(timeout * 1000)))
            let body = try await response.body.collect(upTo: 4 << 20)
            return WebResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
        } catch let e as SoError {
            throw e
        } catch {
            let host = URL(string: request.url)?.host ?? request.url
            throw SoError(
                "\(request.method) \(host) failed: \(error)", hint: "check that \(host) is reachable from this machine",
                exitCode: SoError.exitUnreachable)
        }
    }
}
