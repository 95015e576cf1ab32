import Foundation
import SoBasics

/// The credentials of one connection as client-go picks them: the exec plugin's (cached until they
/// expire), else the token file's (read on every request: bound tokens rotate), else the static token
/// or basic auth. After a 401 the plugin runs again, or the token file is read again, once.
public struct CredentialSource: Sendable {
    public let connection: ClusterConnection
    public let effects: CredentialEffects

    public init(_ connection: ClusterConnection, effects: CredentialEffects) {
        self.connection = connection
        self.effects = effects
    }

    /// The credentials for the next request.
    public func current() async throws -> RequestCredentials {
        if let plugin = connection.exec {
            return Self.from(try await effects.execCache.credential(plugin, for: connection, effects: effects))
        }
        return RequestCredentials(bearerToken: try bearerToken(), basicAuth: connection.basicAuth)
    }

    /// Fresh credentials after the server refused `used` (401), or nil when nothing can change: the
    /// plugin is run again, the token file read again; a static token stays what it is.
    public func afterUnauthorized(_ used: RequestCredentials) async throws -> RequestCredentials? {
        if let plugin = connection.exec {
            let fresh = Self.from(
                try await effects.execCache.credential(plugin, for: connection, effects: effects, replacing: used.exec))
            return fresh == used ? nil : fresh
        }
        guard connection.tokenFile != nil else { return nil }
        let fresh = RequestCredentials(bearerToken: try bearerToken(), basicAuth: connection.basicAuth)
        return fresh == used ? nil : fresh
    }

    static func from(_ c: ExecCredential) -> RequestCredentials {
        RequestCredentials(
            bearerToken: c.token, clientCertificatePEM: c.clientCertificatePEM, clientKeyPEM: c.clientKeyPEM, exec: c)
    }

    /// The token file's content when it can be read (client-go falls back to the static token), else the static token.
    func bearerToken() throws -> String? {
        guard let file = connection.tokenFile else { return connection.token }
        let token: String
        do {
            token = try effects.fs.readText(file, limit: 1 << 20, what: "token file").trimmedWhitespace
        } catch {
            if let t = connection.token { return t }
            throw SoError(
                "cannot read the token file of \(connection.who): \((error as? SoError)?.message ?? String(describing: error))",
                hint: connection.inCluster
                    ? "the pod's service account token is not mounted (automountServiceAccountToken: false?)"
                    : "fix users[].user.tokenFile in \(connection.source ?? "the kubeconfig")")
        }
        if !token.isEmpty { return token }
        if let t = connection.token { return t }
        throw SoError(
            "the token file \(file) of \(connection.who) is empty",
            hint: "check what writes the token (the kubelet refreshes a projected one)")
    }
}
