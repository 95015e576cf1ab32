import Foundation
import SoActions
import SoBasics
import SoKube
import SoWorkspace

/// A task's issue and pull request on GitHub (`TaskForge`, which tasks are given): comments through `GitHubAPI`,
/// with `GITHUB_TOKEN` or `GH_TOKEN`.
public struct GitHubTaskForge: TaskForge {
    public init() {}
    public var serves: Bool { true }

    public func check(_ ctx: SoContext) throws { _ = try GitHubAPI(ctx: ctx).token() }

    public func comment(on issue: String, _ body: String, _ ctx: SoContext) async {
        guard let parsed = GitHubIssue(issue) else {
            return ctx.diagnostics.warn(
                "no comment on '\(issue)': it is not an issue (OWNER/REPO#N)", hint: "comment on it by hand")
        }
        await GitHubAPI(ctx: ctx).commentOrWarn(on: parsed, body)
    }

    /// A plain HTTPS call to GitHub's REST API (`GITHUB_API_URL`, as Actions and GitHub Enterprise set it,
    /// else GitHub's own). An open pull request for the same branch is found and returned.
    public func openPullRequest(
        origin: String, head: String, base: String, title: String, body: String, _ ctx: SoContext
    ) async throws -> String {
        guard let repo = GitHubRepository(url: origin) else {
            throw SoError(
                "cannot tell the GitHub repository of '\(origin)'",
                hint: "a pull request needs an origin such as https://github.com/OWNER/NAME")
        }
        let github = GitHubAPI(ctx: ctx)
        let api = github.base
        let headers = try github.headers()
        let url = "\(api)/repos/\(repo.owner)/\(repo.name)/pulls"
        let payload = YValue.map([
            ("title", .string(title)), ("head", .string(head)), ("base", .string(base)), ("body", .string(body)),
        ])
        let r = try await ctx.web.send(
            WebRequest(method: "POST", url: url, headers: headers, body: Data(payload.compactJSON())), timeout: 30)
        let answer = try? JSON.parse(r.body)  // a body that is not JSON (a proxy's page): the status names the refusal
        if r.status == 201, let link = answer?["html_url"]?.string { return link }
        let message = answer?["message"]?.string ?? "HTTP \(r.status)"
        let details = (answer?["errors"]?.array ?? []).compactMap { $0["message"]?.string }
        if r.status == 422, details.contains(where: { $0.contains("already exists") }) {
            let q = "\(url)?state=open&head=\(repo.owner):\(head)"
            let found = try await ctx.web.send(WebRequest(method: "GET", url: q, headers: headers), timeout: 30)
            // Not JSON, or no open pull request: the refusal below is the answer.
            if found.status == 200, let link = (try? JSON.parse(found.body))?.array.first?["html_url"]?.string {
                return link
            }
        }
        throw SoError(
            "GitHub refused the pull request for \(head) on \(repo.owner)/\(repo.name): \(([message] + details).joined(separator: "; "))",
            hint: r.status == 401 || r.status == 403 || r.status == 404
                ? "the token cannot open pull requests there (it needs pull-requests: write on \(repo.owner)/\(repo.name))"
                : "the branch \(head) is pushed; open the pull request by hand")
    }
}
