import Foundation
import SoActions
import SoBasics
import SoKube
import SoWorkspace

/// GitHub's REST API through the web client `so` has (`GITHUB_API_URL`, as Actions and GitHub Enterprise
/// set it, else GitHub's own), with `GITHUB_TOKEN` or `GH_TOKEN`. The token is sent, never printed.
struct GitHubAPI {
    let ctx: SoContext

    func token() throws -> String {
        for k in ["GITHUB_TOKEN", "GH_TOKEN"] { if let t = ctx.environment[k], !t.isEmpty { return t } }
        throw SoError(
            "--pr and --issue need a GitHub token: GITHUB_TOKEN or GH_TOKEN is not set",
            hint:
                "export a token allowed to open pull requests and comment on the repository (in Actions: permissions: pull-requests: write, issues: write)"
        )
    }

    var base: String {
        (ctx.environment["GITHUB_API_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "https://api.github.com")
            .trimmingSuffix("/")
    }

    func headers(bearer: String? = nil) throws -> [(String, String)] {
        [
            ("Authorization", "Bearer \(try bearer ?? token())"), ("Accept", "application/vnd.github+json"),
            ("User-Agent", "so"), ("X-GitHub-Api-Version", "2022-11-28"), ("Content-Type", "application/json"),
        ]
    }

    /// One request (a JSON body when `payload` is given; the token, or `bearer`, as its authorization): GitHub's
    /// status and its answer, nil for a body that is not JSON (a proxy's page: the status names the refusal).
    func call(_ method: String, _ url: String, _ payload: YValue? = nil, bearer: String? = nil) async throws -> (
        status: Int, answer: JSON?
    ) {
        let r = try await ctx.web.send(
            WebRequest(
                method: method, url: url, headers: try headers(bearer: bearer),
                body: payload.map { Data($0.compactJSON()) }), timeout: 30)
        // a body that is not JSON (a proxy's page): the status names the refusal
        return (r.status, try? JSON.parse(r.body))
    }

    /// GitHub's message in `answer`, else the status.
    static func said(_ answer: JSON?, _ status: Int) -> String { answer?["message"]?.string ?? "HTTP \(status)" }

    /// The installation of the App (`jwt`) on `repository` (OWNER/NAME): `GET /repos/OWNER/NAME/installation`.
    func installation(of repository: String, jwt: String) async throws -> Int {
        let (status, answer) = try await call("GET", "\(base)/repos/\(repository)/installation", bearer: jwt)
        if status == 200, let id = answer?["id"]?.int, id > 0 { return id }
        throw SoError(
            "GitHub names no installation of the App on \(repository): \(Self.said(answer, status))",
            hint: status == 401
                ? "check GITHUB_APP_ID and the private key (the App's, not a deploy key), and this machine's clock"
                : "install the App on \(repository), or give GITHUB_APP_INSTALLATION_ID")
    }

    /// A token of installation `id` for `repositories` (names under the installation's owner):
    /// `POST /app/installations/ID/access_tokens`, answered 201 with the token and when it ends.
    func installationToken(_ id: Int, repositories: [String], jwt: String) async throws -> (
        token: String, expires: Date
    ) {
        let url = "\(base)/app/installations/\(id)/access_tokens"
        let payload = YValue.map([("repositories", .list(repositories.map { .string($0) }))])
        let (status, answer) = try await call("POST", url, payload, bearer: jwt)
        guard status == 201, let token = answer?["token"]?.string, let ends = answer?["expires_at"]?.string else {
            throw SoError(
                "GitHub gave no token for installation \(id): \(Self.said(answer, status))",
                hint: status == 401
                    ? "check GITHUB_APP_ID and the private key, and this machine's clock"
                    : "check that installation \(id) is the App's and covers \(repositories.joined(separator: ", "))")
        }
        // A token goes into a header, a Secret and a shell file: printable, one line, no quote.
        guard (1...512).contains(token.utf8.count), token.utf8.allSatisfy({ (0x21...0x7e).contains($0) && $0 != 0x27 }),
            let expires = Timestamps.parse(ends)
        else { throw SoError("GitHub's token for installation \(id) has an unexpected shape", hint: "try again later") }
        return (token, expires)
    }

    /// A comment on the issue; its URL. A refusal is an error naming GitHub's message.
    func comment(on issue: GitHubIssue, _ body: String) async throws -> String {
        let url = "\(base)/repos/\(issue.owner)/\(issue.name)/issues/\(issue.number)/comments"
        let payload = YValue.map([("body", .string(body))])
        let (status, answer) = try await call("POST", url, payload)
        if status == 201 { return answer?["html_url"]?.string ?? url }
        throw SoError(
            "GitHub refused the comment on \(issue): \(Self.said(answer, status))",
            hint: status == 401 || status == 403 || status == 404
                ? "the token cannot comment there (it needs issues: write on \(issue.owner)/\(issue.name))"
                : "the task goes on; its report: so deployment tasks")
    }

    /// A 👀 reaction to the comment `comment` of the issue's repository, or to the issue itself when nil. GitHub
    /// answers 201 for a new reaction and 200 for one it had.
    /// `onCode`: `comment` is a pull request's review comment (`pulls/comments/ID/reactions`), not an issue's.
    func react(_ issue: GitHubIssue, comment: Int?, onCode: Bool = false) async throws {
        let on = comment.map { "\(onCode ? "pulls" : "issues")/comments/\($0)" } ?? "issues/\(issue.number)"
        let url = "\(base)/repos/\(issue.owner)/\(issue.name)/\(on)/reactions"
        let payload = YValue.map([("content", .string("eyes"))])
        let (status, answer) = try await call("POST", url, payload)
        guard status != 200, status != 201 else { return }
        throw SoError(
            "GitHub refused the reaction on \(comment.map { "\(onCode ? "review " : "")comment \($0) of " } ?? "")\(issue): "
                + Self.said(answer, status),
            hint: "the token needs issues: write on \(issue.owner)/\(issue.name)")
    }

    /// A reply in the thread of review comment `comment` of the pull request (`pull`'s number): GitHub's
    /// `POST /repos/OWNER/NAME/pulls/N/comments/ID/replies`, answered 201.
    func reply(_ pull: GitHubIssue, comment: Int, _ body: String) async throws {
        let url = "\(base)/repos/\(pull.owner)/\(pull.name)/pulls/\(pull.number)/comments/\(comment)/replies"
        let payload = YValue.map([("body", .string(body))])
        let (status, answer) = try await call("POST", url, payload)
        guard status != 201 else { return }
        throw SoError(
            "GitHub refused the reply to review comment \(comment) of \(pull): " + Self.said(answer, status),
            hint: "the token needs pull-requests: write on \(pull.owner)/\(pull.name)")
    }

    /// Comments, warning instead of failing: a comment never changes what happened to the task.
    func commentOrWarn(on issue: GitHubIssue, _ body: String) async {
        do { _ = try await comment(on: issue, body) } catch let e as SoError {
            ctx.diagnostics.warn("no comment on \(issue): \(e.message)", hint: e.hint)
        } catch { ctx.diagnostics.warn("no comment on \(issue): \(error)") }
    }
}
