import Foundation
import SoActions
import SoBasics
import SoWorkspace

/// The installation's token of now for the loop's repositories, asked of GitHub again when less than `margin`
/// seconds of it are left. The loop alone holds it: it pushes the workspaces' work (issue 64).
public actor GitHubAppTokens {
    public let app: GitHubApp
    /// OWNER/NAME: the token is for these repositories only.
    public let repositories: [String]
    public static let margin: Double = 600
    var installation: Int?
    var current: (token: String, expires: Date)?
    /// The tokens given so far (masked in the log lines the loop comments).
    public private(set) var given: [String] = []

    /// An App's token is one installation's, one owner's: repositories of several owners need a loop each.
    public init(app: GitHubApp, repositories: [String]) throws {
        let owners = Set(repositories.map { $0.split(separator: "/").first.map { $0.lowercased() } ?? "" })
        guard owners.count == 1 else {
            throw SoError(
                "the loop's repositories have \(owners.count) owners, and a GitHub App's token is one installation's",
                hint: "run one loop per owner (a config each), or use a token (GITHUB_TOKEN) instead of the App")
        }
        self.app = app
        self.repositories = repositories
        installation = app.installation
    }

    /// The token to act with at `now`; a new one when the last is within `margin` of its end.
    public func token(_ ctx: SoContext, now: Date) async throws -> String {
        if let c = current, c.expires.timeIntervalSince(now) > Self.margin { return c.token }
        let api = GitHubAPI(ctx: ctx)
        let jwt = try app.jwt(now: now)
        let id: Int
        if let known = installation {
            id = known
        } else {
            id = try await api.installation(of: repositories[0], jwt: jwt)
        }
        installation = id
        let names = repositories.map { String($0.split(separator: "/").last ?? "") }
        let fresh = try await api.installationToken(id, repositories: names, jwt: jwt)
        current = fresh
        given.append(fresh.token)
        return fresh.token
    }
}
