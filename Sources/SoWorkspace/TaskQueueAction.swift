import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// Tasks with a life of their own: `so deployment task --detach` queues one in the workspace's container and
/// returns its id; `tasks` lists, shows, follows, waits for and cancels them. The runner (`TaskRunner`) runs
/// them there one at a time, whatever becomes of the `so` that gave them; their reports are files on the
/// workspace's volume that any `so` reads back through the API.
public struct TaskQueueAction {
    public let ctx: SoContext
    /// Where the tasks' issues and pull requests live (`TaskForge`).
    public let forge: TaskForge
    public init(_ ctx: SoContext, forge: TaskForge = NoTaskForge()) {
        self.ctx = ctx
        self.forge = forge
    }

    /// Queues the task; its id. The worker starts it at once when the queue is empty.
    public func submit(_ req: TaskRequest) async throws -> (workspace: String, id: Int) {
        if req.issue != nil || req.pullRequest { try forge.check(ctx) }
        let w = try await WorkspaceContainer.open(ctx, directory: req.directory, cluster: req.cluster)
        let command = try TaskAction(ctx, forge: forge).command(of: w, req)
        try await TaskAction(ctx, forge: forge).refusePullRequestWithoutOrigin(w, req)
        return (w.name, try await submit(in: w, req, command: command))
    }

    func submit(in w: WorkspaceContainer, _ req: TaskRequest, command: String) async throws -> Int {
        var args = [req.text, command, req.push ? "1" : "0", req.issue ?? ""]
        if req.pullRequest {
            args += [req.title ?? (req.subject.isEmpty ? "so task in \(w.name)" : req.subject), req.base ?? ""]
        }
        let r = try await runner(w, "submit", args)
        guard let id = Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SoError(
                "the task runner in \(w.name) gave no task id: \(r.stdout.prefix(80))",
                hint: "see it for yourself: so deployment --dir \(w.c.model.directory) shell")
        }
        return id
    }

    /// A detached task with `--issue`: the comment on its start, made now.
    public func commentStarted(_ req: TaskRequest, workspace: String, id: Int) async {
        guard let issue = req.issue else { return }
        await forge.comment(on: issue, TaskComments.started(id, workspace, req.text), ctx)
    }

    /// A detached task that ended, seen by this `so` first: the pull request it asked for (when it succeeded and
    /// pushed its branch) opened, and the comment on its issue made, once each, whoever sees the end first. With
    /// `comment` false the comment is claimed but not made: the caller says the end its own way (the GitHub loop).
    /// Without a forge that serves them, neither is claimed: they are left to a `so` that has one. `repository`:
    /// where the pull request is opened, when the caller knows (the GitHub loop: the repository it made the workspace
    /// from, never the checkout's origin, which the agent may have changed); else the checkout's origin.
    package func finishEnded(
        _ w: WorkspaceContainer, _ t: TaskRecord, comment: Bool = true, repository: String? = nil
    ) async throws -> TaskRecord {
        guard t.ended else { return t }
        var t = t
        if forge.serves, let title = t.pullRequestTitle, t.pullRequest == nil, t.state == "succeeded",
            let head = t.pushed,
            try await claim(w, t.id, "pull-request")
        {
            let s = try await w.state()
            guard let base = t.pullRequestBase ?? (s.ref.isEmpty ? nil : s.ref) else {
                throw SoError(
                    "no base branch for task \(t.id)'s pull request",
                    hint: "open it by hand from \(head) (the workspace does not record the branch it was cloned from)")
            }
            let url = try await forge.openPullRequest(
                origin: repository ?? s.origin, head: head, base: base, title: title,
                body: TaskComments.pullRequestBody(t.text, w.name, issue: t.issue), ctx)
            try await set(w, t.id, "pull_request", url)
            t.pullRequest = url
            ctx.say("task \(t.id): pull request \(url)")
        }
        if forge.serves, let issue = t.issue, try await claim(w, t.id, "issue-ended"), comment {
            let tail = t.state == "succeeded" ? "" : try await lastLines(w, t.id)
            let result = TaskResult(
                exitCode: Int32(clamping: t.exitCode ?? 1), branch: t.branch ?? "", commits: t.commits.count,
                committedLeftovers: false, pushed: t.pushed != nil, pullRequest: t.pullRequest)
            await forge.comment(on: issue, TaskComments.ended(t, w.name, result: result, lastLines: tail), ctx)
        }
        return t
    }

    /// The workspace's tasks (all, or those asked for, in that order). Reports written badly are warned about.
    public func list(_ directory: String, cluster: ClusterOptions, ids: [Int] = []) async throws -> [TaskRecord] {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        return try await records(w, ids)
    }

    public func show(_ directory: String, cluster: ClusterOptions, id: Int) async throws -> TaskRecord {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        return try await one(w, id)
    }

    /// The task's log as it grows, to this terminal, until the task ends (`follow`), or the log so far; then its record.
    public func logs(_ directory: String, cluster: ClusterOptions, id: Int, follow: Bool) async throws -> TaskRecord {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        if follow {
            if try await followLog(w, id, toStderr: false) != 0 {
                let pod = w.pod
                // Names the fault (no such task …); a known pod that is gone is looked up, and followed there.
                _ = try await runner(w, "report", [String(id)])
                if w.pod != pod { _ = try await followLog(w, id, toStderr: false) }
            }
            return try await finishEnded(w, try await one(w, id))
        } else {
            let r = try await runner(w, "log", [String(id)])
            var lines = r.stdout.components(separatedBy: "\n")
            if lines.last == "" { lines.removeLast() }
            for line in lines { AgentOutput.render(line).forEach(ctx.console.out) }
        }
        return try await one(w, id)
    }

    /// The task's log as it grows, rendered (AgentOutput) to this terminal's stdout or stderr, until the task ends;
    /// the exit code of the exec that follows it.
    func followLog(_ w: WorkspaceContainer, _ id: Int, toStderr: Bool) async throws -> Int32 {
        let console = ctx.console
        return try await ctx.processes.runLines(
            try w.command(TaskRunner.boot, [TaskRunner.script, "follow", String(id)]), environment: nil
        ) { line in
            for shown in AgentOutput.render(line) { toStderr ? console.err(shown) : console.out(shown) }
        }
    }

    /// Waits in the container until the task ends (one exec; `follow` streams its log meanwhile); its record.
    public func wait(_ directory: String, cluster: ClusterOptions, id: Int, follow: Bool) async throws -> TaskRecord {
        guard follow else {
            let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
            _ = try await runner(w, "wait", [String(id)])
            return try await finishEnded(w, try await one(w, id))
        }
        return try await logs(directory, cluster: cluster, id: id, follow: true)
    }

    /// Cancels a queued task, or ends a running one (TERM to its process group, KILL after 10 s); what it
    /// committed stays, and what it left uncommitted is committed.
    public func cancel(_ directory: String, cluster: ClusterOptions, id: Int) async throws -> TaskRecord {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        _ = try await runner(w, "cancel", [String(id)])
        return try await one(w, id)
    }

    /// Records in the task's report what `so` did for it after it ended (`pushed` BRANCH, `pull_request` URL).
    package func set(_ w: WorkspaceContainer, _ id: Int, _ key: String, _ value: String) async throws {
        _ = try await runner(w, "set", [String(id), key, value])
    }

    /// Whether this `so` does `what` for the task (comments on its end, opens its pull request): true once,
    /// for the first that asks.
    func claim(_ w: WorkspaceContainer, _ id: Int, _ what: String) async throws -> Bool {
        try await w.capture(TaskRunner.boot, [TaskRunner.script, "claim", String(id), what]).exitCode == 0
    }

    /// The last lines of the task's log (for a comment on a failure), with every value of the workspace's Secret
    /// and your GitHub token replaced by `<secret>`: an agent that printed a key does not publish it on the issue.
    package func lastLines(_ w: WorkspaceContainer, _ id: Int, count: Int = 15) async throws -> String {
        let r = try await w.run(
            "reading task \(id)'s log",
            #"tail -n "$3" "$(git -C "$1" rev-parse --absolute-git-dir)/so/tasks/$2/log" 2>/dev/null || true"#,
            [String(id), String(count)])
        let secret = try await w.c.client.get(
            .secret, name: DeploymentNames.generatedSecrets(w.c.model.id), namespace: w.c.namespace)
        return Redactor(secrets: secret.map { [$0] } ?? [], environment: ctx.environment).apply(r.stdout)
    }

    func one(_ w: WorkspaceContainer, _ id: Int) async throws -> TaskRecord {
        guard let r = try await records(w, [id]).first else {
            throw SoError(
                "task \(id) in \(w.name) has no report",
                hint: "list its tasks: so deployment --dir \(w.c.model.directory) tasks")
        }
        return r
    }

    package func records(_ w: WorkspaceContainer, _ ids: [Int]) async throws -> [TaskRecord] {
        let r = try await runner(w, "report", ids.map(String.init))
        let records = TaskRecord.parse(r.stdout)
        for t in records {
            for p in t.problems {
                ctx.diagnostics.warn(
                    "task \(t.id) in \(w.name): \(p)",
                    hint:
                        "the report's files are under .git/so/tasks/\(t.id) in the checkout: so deployment --dir \(w.c.model.directory) shell"
                )
            }
        }
        return records
    }

    /// Runs a runner verb; its refusals become errors naming the task and the fix.
    func runner(_ w: WorkspaceContainer, _ verb: String, _ args: [String]) async throws -> ProcessResult {
        let r = try await w.capture(TaskRunner.boot, [TaskRunner.script, verb] + args)
        let id = args.first ?? ""
        let dir = w.c.model.directory
        // What the runner said, not kubectl's "command terminated with exit code N" after it.
        let said =
            r.stderr.split(separator: "\n").last { $0.hasPrefix("so-task: ") }.map(String.init) ?? r.lastErrorLine
        switch r.exitCode {
        case 0: return r
        case 3:
            throw SoError(
                "\(w.name) cannot run tasks: \(said.replacingOccurrences(of: "so-task: ", with: ""))",
                hint:
                    "a task runs in the workspace's git checkout; see why it has none: so deployment --dir \(dir) logs")
        case 4:
            throw SoError("\(w.name) has no task \(id)", hint: "list its tasks: so deployment --dir \(dir) tasks")
        case 5:
            throw SoError(
                "task \(id) in \(w.name) \(said.replacingOccurrences(of: "so-task: task \(id) ", with: ""))",
                hint: "its report: so deployment --dir \(dir) tasks show \(id)")
        default:
            throw SoError(
                "the task runner in \(w.name) failed (\(verb), exit \(r.exitCode)): \(said)",
                hint: "see it for yourself: so deployment --dir \(dir) shell")
        }
    }
}
