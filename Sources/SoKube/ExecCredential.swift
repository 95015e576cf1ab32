import Foundation
import SoBasics

/// The `status` of the ExecCredential a plugin printed. Never printed or logged: it holds a secret.
public struct ExecCredential: Sendable, Equatable, CustomStringConvertible {
    public var description: String {
        let has = [token.map { _ in "token" }, clientCertificatePEM.map { _ in "client certificate" }].compactMap { $0 }
        return "ExecCredential("
            + (has + [expiry.map { "expires \(Timestamps.rfc3339($0))" } ?? "no expiry"]).joined(separator: ", ")
            + ", secrets redacted)"
    }

    public var token: String?
    public var clientCertificatePEM: Data?
    public var clientKeyPEM: Data?
    public var expiry: Date?

    public init(token: String? = nil, clientCertificatePEM: Data? = nil, clientKeyPEM: Data? = nil, expiry: Date? = nil)
    {
        self.token = token
        self.clientCertificatePEM = clientCertificatePEM
        self.clientKeyPEM = clientKeyPEM
        self.expiry = expiry
    }

    /// client-go keeps a credential until its expirationTimestamp has passed (forever without one).
    public func expired(at now: Date) -> Bool { expiry.map { now >= $0 } ?? false }
}
