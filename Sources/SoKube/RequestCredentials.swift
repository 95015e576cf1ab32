import Foundation
import SoBasics

/// What one request carries to say who it is. Never printed or logged: it holds secrets.
public struct RequestCredentials: Sendable, Equatable, CustomStringConvertible {
    public var description: String {
        let has = [
            bearerToken.map { _ in "bearer token" }, basicAuth.map { _ in "basic auth" },
            clientCertificatePEM.map { _ in "client certificate" },
        ]
        return "RequestCredentials(" + has.compactMap { $0 }.joined(separator: ", ") + ", secrets redacted)"
    }

    public var bearerToken: String?
    public var basicAuth: BasicAuth?
    /// A client certificate an exec plugin gave (the kubeconfig's own is part of the TLS set-up).
    public var clientCertificatePEM: Data?
    public var clientKeyPEM: Data?
    /// The exec credential these came from, to tell the cache which one the server refused.
    public var exec: ExecCredential?

    public init(
        bearerToken: String? = nil, basicAuth: BasicAuth? = nil, clientCertificatePEM: Data? = nil,
        clientKeyPEM: Data? = nil,
        exec: ExecCredential? = nil
    ) {
        self.bearerToken = bearerToken
        self.basicAuth = basicAuth
        self.clientCertificatePEM = clientCertificatePEM
        self.clientKeyPEM = clientKeyPEM
        self.exec = exec
    }

    /// The `Authorization` header value, if any.
    public var authorization: String? {
        if let bearerToken { return "Bearer \(bearerToken)" }
        if let b = basicAuth { return "Basic " + Data("\(b.username):\(b.password)".utf8).base64EncodedString() }
        return nil
    }
}
