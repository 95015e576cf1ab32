import Foundation
import SoBasics

/// A web API stand-in that records requests and answers from a script.
public final class FakeWeb: WebClient, @unchecked Sendable {
    private let lock = NSLock()
    public init() {}
    public private(set) var requests: [WebRequest] = []
    public var answers: [WebResponse] = []
    public func send(_ request: WebRequest, timeout: Double) async throws -> WebResponse {
        try lock.withLock {
            requests.append(request)
            guard !answers.isEmpty else { throw SoError("unexpected web request \(request.method) \(request.url)") }
            return answers.removeFirst()
        }
    }
}
