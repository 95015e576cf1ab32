import Foundation

/// The seam for web APIs (HTTPS live, a fake or a local stand-in server in tests).
public protocol WebClient: Sendable {
    func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse
}
