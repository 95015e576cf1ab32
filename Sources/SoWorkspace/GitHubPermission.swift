import Foundation
import SoBasics
import SoKube

/// What a GitHub user may do in a repository, as GitHub's `GET /repos/OWNER/NAME/collaborators/LOGIN/permission`
/// says (its `role_name`: `admin`, `maintain`, `write`, `triage`, `read`; a custom role's name falls back to
/// `permission`, the base it was made from). Ordered: the loop's `trust:` is the least a sender needs to give a
/// task. `author_association` is no such thing: an organization's member with no access to the repository, or a
/// collaborator who may only read, shows as `MEMBER` or `COLLABORATOR`.
public enum GitHubPermission: Int, Sendable, Comparable, CaseIterable, Codable {
    case none, read, triage, write, maintain, admin

    public static func < (a: GitHubPermission, b: GitHubPermission) -> Bool { a.rawValue < b.rawValue }

    public var name: String { "\(self)" }

    public init?(name: String) {
        guard let p = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = p
    }

    /// GitHub's answer: its role when it is one of GitHub's, else its base permission, else none.
    public init(answer: JSON?) {
        let role = answer?["role_name"]?.string.flatMap(GitHubPermission.init(name:))
        self = role ?? answer?["permission"]?.string.flatMap(GitHubPermission.init(name:)) ?? .none
    }

    /// The levels `trust:` takes: below write, a task could be given by someone who could not push its work.
    public static let trustLevels: [GitHubPermission] = [.write, .maintain, .admin]

    /// Whether `login` is an App's bot (`NAME[bot]`): it acts only when the loop's `bots:` names it.
    public static func isBot(_ login: String) -> Bool { login.lowercased().hasSuffix("[bot]") }

    /// The key of `login`'s permission on `repository` in a pass's answers (neither is case-sensitive on GitHub).
    public static func key(_ repository: String, _ login: String) -> String {
        repository.lowercased() + " " + login.lowercased()
    }
}

extension GitHubAPI {
    /// `login`'s permission on `repository` (OWNER/NAME): `GET /repos/OWNER/NAME/collaborators/LOGIN/permission`.
    /// GitHub's 404 (no such user, or none it will name) is `none`; any other refusal is an error: the loop then
    /// leaves the delivery pending rather than guess.
    func permission(_ repository: String, login: String) async throws -> GitHubPermission {
        let user = login.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_", "."])) ?? login
        let (status, answer) = try await call("GET", "\(base)/repos/\(repository)/collaborators/\(user)/permission")
        if status == 200 { return GitHubPermission(answer: answer) }
        if status == 404 { return .none }
        throw SoError(
            "GitHub did not say what @\(login) may do in \(repository): \(Self.said(answer, status))",
            hint: "the loop's token needs metadata: read on \(repository); the delivery waits for the next pass")
    }
}
