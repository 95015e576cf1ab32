import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoWorkspace

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

    public init(
        ctx: SoContext, client: ClusterClient, config: GitHubLoopConfig, cluster: ClusterOptions,
        app: GitHubAppTokens? = nil
    ) {
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
    /// before it ends; GH_TOKEN and GIT_TOKEN left out). No workspace is given it.
    func acting() async throws -> SoContext {
        guard let app else { return ctx }
        var c = ctx
        c.environment["GITHUB_TOKEN"] = try await app.token(ctx, now: ctx.clock.now())
        c.environment["GH_TOKEN"] = nil
        c.environment["GIT_TOKEN"] = nil  // the workspaces' git would take it before GITHUB_TOKEN
        return c
    }

    /// The environment the loop's git pushes with: its token of now (`acting`), given to git by a credential helper
    /// that reads it from the environment (never a command line, a URL or a file), and no prompt.
    static func pushEnvironment(_ c: SoContext) -> [String: String] {
        var env = c.environment
        env["SO_GITHUB_PUSH_TOKEN"] = c.environment["GITHUB_TOKEN"] ?? c.environment["GH_TOKEN"] ?? ""
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["GIT_CONFIG_COUNT"] = "2"
        env["GIT_CONFIG_KEY_0"] = "credential.helper"
        env["GIT_CONFIG_VALUE_0"] = ""
        env["GIT_CONFIG_KEY_1"] = "credential.helper"
        env["GIT_CONFIG_VALUE_1"] =
            #"!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$SO_GITHUB_PUSH_TOKEN"; }; f"#
        return env
    }

    /// Where `repository`'s branches go: the `GIT_REPO` the loop made the workspace with (the config's, else
    /// GitHub's), never the origin the workspace's checkout names (an agent may change that).
    func pushURL(_ repository: String) -> String {
        let repo = Self.settings(config, repository: repository).last { $0.hasPrefix("GIT_REPO=") }
        return String(repo?.dropFirst("GIT_REPO=".count) ?? "")
    }

    /// The bare repository the loop takes `workspace`'s work into before it pushes it (removed with the workspace).
    func mirror(_ workspace: String) -> String { Path.join(ctx.soHome, "github-push", workspace) }

    public func entries(state: String) async throws -> [GitHubInbox.Entry] { try await inbox.list(state: state) }
    public func threads() async throws -> [GitHubLoopStore.Stored] { try await GitHubLoopStore(client: client).all() }
    // nil: another loop took the entry
    public func mark(_ entry: GitHubInbox.Entry, state: String) async throws -> GitHubInbox.Entry? {
        try await inbox.marked(entry, state: state, at: ctx.clock.now(), by: state == "taken" ? identity : nil)
    }
    public func delete(_ entry: GitHubInbox.Entry) async throws -> Bool { try await inbox.delete(entry) }
    public func takenDigests() async throws -> GitHubTakenDigests { try await inbox.takenDigests() }
    public func remember(_ digests: [(digest: String, at: Date)]) async throws { try await inbox.remember(digests) }
    public func exists(workspace: String) async throws -> Bool {
        try await RecordAction(ctx).exists(name: workspace, client: client)
    }
    public func save(_ thread: GitHubLoopThread, over: GitHubLoopStore.Stored?) async throws -> GitHubLoopStore.Stored?
    {
        try await GitHubLoopStore(client: client).saved(thread, over: over)
    }

    public func up(workspace: String, repository: String, carried: Bool) async throws {
        var req = UpRequest(stack: config.stack)
        req.name = workspace
        req.config = Self.settings(config, repository: repository)
        req.agent = config.agent
        req.cluster = cluster
        var c = ctx
        c.environment = Self.workspaceEnvironment(c.environment)
        guard carried else {
            _ = try await UpAction(c).run(req)
            return
        }
        let checkout = GitHubCheckout(ctx: ctx, environment: Self.pushEnvironment(try await acting()))
        let dir = try await checkout.make(repository, url: pushURL(repository), ref: Self.setting("GIT_REF", config))
        defer { checkout.done(dir) }
        req = Self.carried(req, from: GitHubCheckout.checkout(dir))
        _ = try await UpAction(c).run(req)
    }

    /// `req` starting from the loop's checkout `from`, carried in as a bundle: no `GIT_REPO` (the workspace's clone
    /// waits for the bundle; its origin is the checkout's, which names the repository and holds no token).
    static func carried(_ req: UpRequest, from: String) -> UpRequest {
        var r = req
        r.config = r.config.filter { !$0.hasPrefix("GIT_REPO=") }
        r.from = from
        return r
    }

    /// The config's last `KEY=` setting, when not empty.
    static func setting(_ key: String, _ config: GitHubLoopConfig) -> String? {
        let value = config.config.last { $0.hasPrefix(key + "=") }?.dropFirst(key.count + 1)
        return value.flatMap { $0.isEmpty ? nil : String($0) }
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
        var req = TaskRequest(directory: try await directory(workspace), text: text)
        // The workspace has no token to push with: the loop pushes the task's branch when it sees it end (`work`).
        req.push = false
        req.pullRequest = pullRequest
        req.title = title.map { String($0.prefix(72)) }
        req.issue = issue.description
        req.cluster = cluster
        return try await TaskQueueAction(c, forge: GitHubTaskForge()).submit(req).id
    }

    public func down(workspace: String, repository: String) async throws -> String? {
        let kept = try await keep(workspace, repository: repository)
        var req = DownRequest(name: workspace)
        req.cluster = cluster
        // Not --discard: the guard reads the checkout again, and refuses if the push above did not save it all.
        try await DownAction(ctx).run(req)
        // best effort: the mirror is made again by the next push, and nothing else reads it
        try? ctx.fs.removeOwnedTree(mirror(workspace), owner: .labelledChild(of: Path.join(ctx.soHome, "github-push")))
        return kept
    }

    /// What the workspace holds that its origin does not (commits not pushed; changes not committed, committed
    /// first) taken out and pushed by the loop to `so/kept/WORKSPACE-YYYYMMDD-HHMMSS`: that branch, or nil when
    /// there was nothing to keep or no container to read it from (then `down`'s own guard decides).
    func keep(_ workspace: String, repository: String) async throws -> String? {
        let dir = try await directory(workspace)
        let w = try await WorkspaceContainer.open(ctx, directory: dir, cluster: cluster, known: false)
        guard w.pod != nil else { return nil }
        let s = try await w.state()
        guard s.problem == nil, s.losses != nil else { return nil }
        let branch = Self.keptBranch(workspace, at: ctx.clock.now())
        let pushed = try await WorkspaceGitAction(ctx).pushOut(
            w, mirror: mirror(workspace), url: pushURL(repository), to: branch,
            environment: Self.pushEnvironment(try await acting()),
            leftovers: "so: the changes \(workspace) left uncommitted when it was removed")
        return pushed == nil ? nil : branch
    }

    /// A task that ended with commits the loop has not pushed: its branch taken out of the workspace and pushed by
    /// the loop to `agent/WORKSPACE` (whatever branch the checkout is on), and recorded as pushed, so its pull
    /// request can be opened.
    func pushEnded(_ w: WorkspaceContainer, _ t: TaskRecord, workspace: String, repository: String, _ c: SoContext)
        async throws -> TaskRecord
    {
        guard t.ended, t.pushed == nil, !t.commits.isEmpty else { return t }
        let branch = "agent/\(workspace)"
        guard
            try await WorkspaceGitAction(c).pushOut(
                w, mirror: mirror(workspace), url: pushURL(repository), to: branch,
                environment: Self.pushEnvironment(c)) != nil
        else { return t }
        try await TaskQueueAction(c).set(w, t.id, "pushed", branch)
        var t = t
        t.pushed = branch
        return t
    }

    /// `so/kept/WORKSPACE-YYYYMMDD-HHMMSS` (UTC): a workspace of the same name made again later keeps elsewhere.
    static func keptBranch(_ workspace: String, at: Date) -> String {
        // 2026-11-28T02:30:35Z → 20261128-023035
        let digits = Timestamps.rfc3339(at).filter { $0.isNumber || $0 == "T" }.replacingOccurrences(of: "T", with: "-")
        return "so/kept/\(workspace)-\(digits)"
    }

    public func work(workspace: String, repository: String) async throws -> GitHubLoopWork {
        let c = try await acting()
        let queue = TaskQueueAction(c, forge: GitHubTaskForge())
        let w = try await WorkspaceContainer.open(c, directory: try await directory(workspace), cluster: cluster)
        var records = try await queue.records(w, [])
        // A task that ended: its branch pushed by the loop (the workspace holds no token), then its pull request
        // opened by the first so that sees its end: this one, maybe. Its end is the loop's to comment
        // (GitHubLoopReport): the runner's own comment is claimed and not made.
        if let last = records.indices.last, records[last].ended {
            do {
                records[last] = try await pushEnded(w, records[last], workspace: workspace, repository: repository, c)
            } catch {
                // As the runner's own push failing was: the task's end goes on (no pull request; its outcome says
                // so), and the issue's later work is not held by it; the next task's end pushes the branch again.
                ctx.console.err(
                    "github: \(workspace): task \(records[last].id)'s branch was not pushed: "
                        + GitHubLoopExecutor.oneLine(error))
            }
            records[last] = try await queue.finishEnded(
                w, records[last], comment: false, repository: pushURL(repository))
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
        // The workspace never held a token of the loop's; any it printed all the same is masked.
        guard let app else {
            return Redactor(values: GitHubLoopConfig.loopsTokens.compactMap { ctx.environment[$0] }).apply(tail)
        }
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
    /// restarted elsewhere), through the record's gate: a revision this machine would not trust is refused and
    /// makes no directory.
    func directory(_ workspace: String) async throws -> String {
        let dir = try ctx.namedDeployment(workspace)
        if ctx.fs.isDirectory(dir) { return dir }
        return try await RecordAction(ctx).materialize(name: workspace, cluster: cluster)
    }
}
