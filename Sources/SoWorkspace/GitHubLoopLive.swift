import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube

/// The GitHub loop's effects on the world: the inbox and the threads in the cluster (`client`), the workspaces
/// through UpAction, TaskQueueAction and DownAction in-process, GitHub through `GitHubAPI`. The actions run with a
/// console of their own (`GitHubLoopConsole`): quiet, their lines on stderr, never a question, so the loop's stdout
/// is its steps' lines and `down` refuses rather than asks.
public struct GitHubLoopLive: GitHubLoopEffects {
    public let ctx: SoContext
    public let client: ClusterClient
    public let config: GitHubLoopConfig
    public let cluster: ClusterOptions
    public let identity: String
    /// A GitHub App's tokens (`GitHubApp`): nil acts with the environment's GITHUB_TOKEN or GH_TOKEN.
    public let app: GitHubAppTokens?
    /// Without an App: the workspaces' own token (`GitHubLoopConfig.workspaceToken`), never the loop's.
    public let workspaceToken: String?

    public init(
        ctx: SoContext, client: ClusterClient, config: GitHubLoopConfig, cluster: ClusterOptions,
        app: GitHubAppTokens? = nil, workspaceToken: String? = nil
    ) {
        self.workspaceToken = workspaceToken
        var quiet = ctx
        quiet.options.quiet = true
        quiet.console = GitHubLoopConsole(base: ctx.console)
        self.ctx = quiet
        self.client = client
        self.config = config
        self.cluster = cluster
        self.app = app
        let host = ProcessInfo.processInfo.hostName.prefix(60)
        identity = "\(host)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8).lowercased())"
    }

    var inbox: GitHubInbox { GitHubInbox(client: client) }

    /// The context GitHub is reached in: with an App, GITHUB_TOKEN is its installation's token of now (renewed
    /// before it ends; GH_TOKEN and GIT_TOKEN left out), which `up` puts in a new workspace's Secret.
    func acting() async throws -> SoContext {
        guard let app else { return ctx }
        var c = ctx
        c.environment["GITHUB_TOKEN"] = try await app.token(ctx, now: ctx.clock.now())
        c.environment["GH_TOKEN"] = nil
        c.environment["GIT_TOKEN"] = nil  // the workspaces' git would take it before GITHUB_TOKEN
        return c
    }

    /// With an App: `workspace`'s Secret, and its container when one runs, get the token of now unless they hold it
    /// (its next push, a running task's included, reads it). A workspace whose stack takes no GITHUB_TOKEN gets none.
    func handToken(_ workspace: String, _ c: SoContext) async throws {
        guard let app, let token = c.environment["GITHUB_TOKEN"], await app.needsHand(workspace, token) else { return }
        let w = try await WorkspaceContainer.open(
            c, directory: try await directory(workspace), cluster: cluster, wake: false)
        try await ClaimCredentials(ctx: c).hand(w, only: ["GITHUB_TOKEN"])
        await app.handed(workspace, token)
    }

    public func entries(state: String) async throws -> [GitHubInbox.Entry] { try await inbox.list(state: state) }
    public func threads() async throws -> [GitHubLoopStore.Stored] { try await GitHubLoopStore(client: client).all() }
    // nil: another loop took the entry
    public func mark(_ entry: GitHubInbox.Entry, state: String) async throws -> GitHubInbox.Entry? {
        try await inbox.marked(entry, state: state, at: ctx.clock.now(), by: state == "taken" ? identity : nil)
    }
    public func delete(_ entry: GitHubInbox.Entry) async throws -> Bool { try await inbox.delete(entry) }
    public func exists(workspace: String) async throws -> Bool {
        try await RecordAction(ctx).exists(name: workspace, client: client)
    }
    public func save(_ thread: GitHubLoopThread, over: GitHubLoopStore.Stored?) async throws -> GitHubLoopStore.Stored?
    {
        try await GitHubLoopStore(client: client).saved(thread, over: over)
    }

    public func up(workspace: String, repository: String) async throws {
        var req = UpRequest(stack: config.stack)
        req.name = workspace
        req.config = Self.settings(config, repository: repository)
        req.agent = config.agent
        req.cluster = cluster
        var c = try await acting()
        c.environment = Self.workspaceEnvironment(c.environment, token: workspaceToken, app: app != nil)
        _ = try await UpAction(c).run(req)
        if let app, let token = c.environment["GITHUB_TOKEN"] { await app.handed(workspace, token) }
    }

    /// The config's settings, with the repository's clone as `GIT_REPO` unless the config names one.
    static func settings(_ config: GitHubLoopConfig, repository: String) -> [String] {
        if config.config.contains(where: { $0.hasPrefix("GIT_REPO=") }) { return config.config }
        return config.config + ["GIT_REPO=https://github.com/\(repository)"]
    }

    public func task(workspace: String, text: String, title: String?, pullRequest: Bool, issue: GitHubIssue)
        async throws -> Int
    {
        let c = try await acting()
        try await handToken(workspace, c)
        var req = TaskRequest(directory: try await directory(workspace), text: text)
        req.pullRequest = pullRequest
        req.title = title.map { String($0.prefix(72)) }
        req.issue = issue
        req.cluster = cluster
        return try await TaskQueueAction(c).submit(req).id
    }

    public func down(workspace: String) async throws -> String? {
        try await handToken(workspace, try await acting())
        let kept = try await keep(workspace)
        var req = DownRequest(name: workspace)
        req.cluster = cluster
        // Not --discard: the guard reads the checkout again, and refuses if the push above did not save it all.
        try await DownAction(ctx).run(req)
        return kept
    }

    /// What the workspace holds that its origin does not (commits not pushed; changes not committed, committed
    /// first) pushed to `so/kept/WORKSPACE-YYYYMMDD-HHMMSS`: that branch, or nil when there was nothing to keep or
    /// no container to read it from (then `down`'s own guard decides).
    func keep(_ workspace: String) async throws -> String? {
        let dir = try await directory(workspace)
        let w = try await WorkspaceContainer.open(ctx, directory: dir, cluster: cluster, known: false)
        guard w.pod != nil else { return nil }
        let s = try await w.state()
        guard s.problem == nil, s.losses != nil, !s.origin.isEmpty else { return nil }
        let branch = Self.keptBranch(workspace, at: ctx.clock.now())
        try await w.run(
            "keeping \(workspace)'s work on \(branch)",
            """
            cd "$1" && if [ -n "$(git status --porcelain)" ]; then git add -A && git commit -q -m "$3"; fi
            git push -q origin "HEAD:refs/heads/$2" 2>&1
            """, [branch, "so: the changes \(workspace) left uncommitted when it was removed"])
        return branch
    }

    /// `so/kept/WORKSPACE-YYYYMMDD-HHMMSS` (UTC): a workspace of the same name made again later keeps elsewhere.
    static func keptBranch(_ workspace: String, at: Date) -> String {
        // 2026-11-28T02:30:35Z → 20261128-023035
        let digits = Timestamps.rfc3339(at).filter { $0.isNumber || $0 == "T" }.replacingOccurrences(of: "T", with: "-")
        return "so/kept/\(workspace)-\(digits)"
    }

    public func work(workspace: String) async throws -> GitHubLoopWork {
        let c = try await acting()
        let queue = TaskQueueAction(c)
        let w = try await WorkspaceContainer.open(c, directory: try await directory(workspace), cluster: cluster)
        var records = try await queue.records(w, [])
        // A task that runs pushes when it ends: with the token of then.
        if records.contains(where: { !$0.ended }) { try await handToken(workspace, c) }
        // The pull request of a task that ended is opened by the first so that sees its end: this one, maybe. Its
        // end is the loop's to comment (GitHubLoopReport): the runner's own comment is claimed and not made.
        if let last = records.indices.last, records[last].ended {
            records[last] = try await queue.finishEnded(w, records[last], comment: false)
        }
        return GitHubLoopWork(
            running: records.contains { !$0.ended },
            pullRequest: records.compactMap { $0.pullRequest.flatMap(Self.pullNumber) }.last,
            branch: records.compactMap(\.pushed).last,
            cost: records.compactMap(\.cost.usd).reduce(0, +),
            tasks: records.map { r in
                GitHubLoopWork.Task(
                    id: r.id, state: r.state, exitCode: r.exitCode, commits: r.commits,
                    cost: r.cost.reported ? r.cost.text : nil, pullRequest: r.pullRequest,
                    issue: r.issue?.lowercased() ?? "")
            })
    }

    public func logTail(workspace: String, task: Int) async throws -> String {
        let w = try await WorkspaceContainer.open(ctx, directory: try await directory(workspace), cluster: cluster)
        let tail = try await TaskQueueAction(ctx).lastLines(w, task, count: GitHubLoopReport.logLines)
        // The Secret holds the App's token of now; one of an earlier hour that a task printed is masked too.
        guard let app else { return Redactor(values: workspaceToken.map { [$0] } ?? []).apply(tail) }
        return Redactor(values: await app.given).apply(tail)
    }

    /// A pull request's number from its URL (`…/pull/7`).
    static func pullNumber(_ url: String) -> Int? {
        let parts = url.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 2] == "pull" else { return nil }
        return Int(parts[parts.count - 1])
    }

    public func comment(_ issue: GitHubIssue, _ body: String) async throws {
        _ = try await GitHubAPI(ctx: try await acting()).comment(on: issue, body)
    }
    public func reply(_ pull: GitHubIssue, comment: Int, _ body: String) async throws {
        try await GitHubAPI(ctx: try await acting()).reply(pull, comment: comment, body)
    }
    public func react(_ issue: GitHubIssue, comment: Int?) async throws {
        try await GitHubAPI(ctx: try await acting()).react(issue, comment: comment)
    }
    public func reactOnCode(_ pull: GitHubIssue, comment: Int) async throws {
        try await GitHubAPI(ctx: try await acting()).react(pull, comment: comment, onCode: true)
    }
    public func permission(repository: String, login: String) async throws -> GitHubPermission {
        try await GitHubAPI(ctx: try await acting()).permission(repository, login: login)
    }

    /// The workspace's directory here, made from its record in the cluster when this machine has none (a loop
    /// restarted elsewhere); a record this machine would not trust is refused and its directory removed.
    func directory(_ workspace: String) async throws -> String {
        let dir = try ctx.namedDeployment(workspace)
        if ctx.fs.isDirectory(dir) { return dir }
        let made = try await RecordAction(ctx).materialize(name: workspace, cluster: cluster)
        do { try RecordTrust.checkHere(made, ctx: ctx) } catch {
            try ctx.fs.removeOwnedTree(made, owner: .labelledChild(of: Path.dirname(made)))
            throw error
        }
        return made
    }
}
