import Foundation
import SoActions
import SoBasics

/// A GitHub App the loop answers as: what it does is done with an installation's token (an hour's life), so its
/// pushes trigger the repository's workflows (a push with Actions' own GITHUB_TOKEN does not) and its comments are
/// the App's. From the environment (the loop's Secret):
///
/// - `GITHUB_APP_ID`: the App's ID (or its client ID), the JWT's issuer;
/// - `GITHUB_APP_PRIVATE_KEY` (the PEM) or `GITHUB_APP_PRIVATE_KEY_FILE` (a file holding it);
/// - `GITHUB_APP_INSTALLATION_ID`, optional: else the installation on the loop's first repository.
public struct GitHubApp: Sendable {
    public let id: String
    public let key: RSAPrivateKey
    public let installation: Int?

    public init(id: String, key: RSAPrivateKey, installation: Int?) {
        self.id = id
        self.key = key
        self.installation = installation
    }

    /// The App the environment names, or nil when `GITHUB_APP_ID` is unset or empty.
    public static func fromEnvironment(_ env: [String: String], fs: FileSystem) throws -> GitHubApp? {
        guard let id = env["GITHUB_APP_ID"], !id.isEmpty else { return nil }
        guard id.utf8.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") }) else {
            throw SoError(
                "GITHUB_APP_ID is not an App's ID", hint: "give the App ID or client ID from the App's settings page")
        }
        let pem: String
        let source: String
        if let text = env["GITHUB_APP_PRIVATE_KEY"], !text.isEmpty {
            (pem, source) = (text, "GITHUB_APP_PRIVATE_KEY")
        } else if let file = env["GITHUB_APP_PRIVATE_KEY_FILE"], !file.isEmpty {
            (pem, source) = (try fs.readText(file, limit: 64 * 1024, what: "the App's private key"), file)
        } else {
            throw SoError(
                "GITHUB_APP_ID is set, but neither GITHUB_APP_PRIVATE_KEY nor GITHUB_APP_PRIVATE_KEY_FILE",
                hint: "give the App's private key (the .pem its settings page generates) in one of them")
        }
        var installation: Int?
        if let text = env["GITHUB_APP_INSTALLATION_ID"], !text.isEmpty {
            guard let n = Int(text), n > 0 else {
                throw SoError(
                    "GITHUB_APP_INSTALLATION_ID is not a number",
                    hint: "give the number at the end of the installation's settings URL, or leave it unset")
            }
            installation = n
        }
        return GitHubApp(id: id, key: try RSAPrivateKey(pem: pem, source: source), installation: installation)
    }

    /// The App's JSON Web Token (RS256) for `now`: issued a minute before (clocks drift) and ending 9 minutes after
    /// (GitHub takes at most 10).
    public func jwt(now: Date) throws -> String {
        let t = Int(now.timeIntervalSince1970)
        let header = YValue.map([("alg", .string("RS256")), ("typ", .string("JWT"))])
        let claims = YValue.map([("iat", .int(t - 60)), ("exp", .int(t + 540)), ("iss", .string(id))])
        let input = Self.base64URL(header.compactJSON()) + "." + Self.base64URL(claims.compactJSON())
        return input + "." + Self.base64URL(try key.signSHA256(Array(input.utf8)))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}
