import Foundation

/// The default: no web access (a context that needs it is given one).
public struct NoWebClient: WebClient {
    public init() {}
    public func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse {
        throw SoError(
            "no web client in this context", hint: "this is a bug in so (or a test that did not pass a web client)")
    }
}
