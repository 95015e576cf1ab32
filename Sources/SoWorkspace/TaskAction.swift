import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// `so deployment task TEXT`: the agent CLI runs headless in the workspace (the spec's `workspace.task`
/// with the text in `$TASK`), its output streams to this terminal or log, and what it leaves becomes a
/// pushed branch — and, asked and allowed, a pull request. The exit code is the agent's.
public struct TaskAction {
    public let ctx: SoContext
    /// Where the task's issue and pull request live (`TaskForge`).
    public let forge: TaskForge
    public init(_ ctx: SoContext, forge: TaskForge = NoTaskForge()) {
        self.ctx = ctx
        self.forge = forge
    }

    public func run(_ req: TaskRequest) async throws -> TaskResult {
        let w = try await WorkspaceContainer.open(ctx, directory: req.directory, cluster: req.cluster)
        let command = try command(of: w, req)
        try await refusePullRequestWithoutOrigin(w, req)
        if req.pullRequest || req.issue != nil { try forge.check(ctx) }
        // A task like any other (queued, reported, listed by 'tasks'), followed here; so pushes and opens the
        // pull request itself, as the caller asked.
        var queued = req
        queued.push = false
        let queue = TaskQueueAction(ctx, forge: forge)
        let id = try await queue.submit(in: w, queued, command: command)
        ctx.say("task: running '\(command)' in \(w.name) as task \(id) (it goes on if this so stops)")
        if let issue = req.issue {
            await forge.comment(on: issue, TaskComments.started(id, w.name, req.text), ctx)
        }
        _ = try await queue.followLog(w, id, toStderr: req.agentOutputToStderr)
        let record = try await queue.one(w, id)
        guard record.ended else {
            throw SoError(
                "task \(id) in \(w.name) is still \(record.state): following its log ended first",
                hint:
                    "it goes on in the workspace; follow it: so deployment --dir \(w.c.model.directory) tasks logs \(id) -f"
            )
        }
        let code = Int32(clamping: record.exitCode ?? 1)
        ctx.say("task: the agent exited with \(code)\(record.state == "cancelled" ? " (cancelled)" : "")")
        guard let issue = req.issue else { return try await finish(w, req, record, code: code) }
        do {
            let result = try await finish(w, req, record, code: code)
            if try await queue.claim(w, id, "issue-ended") {
                let tail = code == 0 ? "" : try await queue.lastLines(w, id)
                await forge.comment(
                    on: issue, TaskComments.ended(record, w.name, result: result, lastLines: tail), ctx)
            }
            return result
        } catch {
            // The claim is this run's to take; a claim it cannot make (the container went) still says why.
            if (try? await queue.claim(w, id, "issue-ended")) ?? true {
                await forge.comment(on: issue, TaskComments.failedAfter(record, w.name, error), ctx)
            }
            throw error
        }
    }

    /// After the agent: the branch pushed and the pull request opened, as asked.
    func finish(_ w: WorkspaceContainer, _ req: TaskRequest, _ record: TaskRecord, code: Int32) async throws
        -> TaskResult
    {
        // What the agent left uncommitted was committed by the runner, so the branch holds all of it.
        let leftovers = record.progress.contains { $0.text == TaskRunner.committedLeftovers }
        let s = try await w.state()
        var result = TaskResult(
            exitCode: code, branch: s.branch, commits: s.ahead, committedLeftovers: leftovers, pushed: false)
        guard s.ahead > 0 else {
            ctx.say("task: no changes on \(s.branch)")
            return result
        }
        ctx.say(
            "task: \(s.ahead) \(English.plural("commit", s.ahead)) on \(s.branch)\(leftovers ? " (what the agent left uncommitted is the last)" : "")"
        )
        guard req.push else { return result }
        // A checkout with no origin (a workspace of a local checkout, or of no GIT_REPO) keeps its branch: the task
        // did what it was asked, and the work is one fetch or apply away.
        guard !s.origin.isEmpty || s.problem != nil else {
            let take = "so deployment --dir \(w.c.model.directory)"
            ctx.say(
                "task: \(s.branch) stays in the workspace (its checkout has no origin to push to); take it: "
                    + "\(take) fetch (a branch in your clone) or \(take) apply (the changes in your working tree)")
            return result
        }
        let pushed = try await WorkspaceGitAction(ctx).push(w, message: nil, known: s)
        result.pushed = true
        try await TaskQueueAction(ctx).set(w, record.id, "pushed", pushed.branch)
        ctx.say("task: pushed \(pushed.branch) (\(pushed.commit.prefix(12))) to \(pushed.origin)")
        guard req.pullRequest else { return result }
        guard code == 0 else {
            ctx.diagnostics.warn(
                "no pull request: the agent exited with \(code)",
                hint: "the branch \(s.branch) is pushed; open one by hand once the work is checked")
            return result
        }
        let subject = req.subject
        let base = req.base ?? (s.ref.isEmpty ? nil : s.ref)
        guard let base else {
            throw SoError(
                "no base branch for the pull request",
                hint: "pass --base BRANCH (the workspace does not record the branch it was cloned from)")
        }
        let pullRequest = try await forge.openPullRequest(
            origin: s.origin, head: s.branch, base: base,
            title: req.title ?? (subject.isEmpty ? "so task in \(w.name)" : subject),
            body: TaskComments.pullRequestBody(req.text, w.name, issue: req.issue), ctx)
        result.pullRequest = pullRequest
        try await TaskQueueAction(ctx).set(w, record.id, "pull_request", pullRequest)
        ctx.say("task: pull request \(pullRequest)")
        return result
    }

    /// `--pr` in a workspace whose checkout has no origin is refused before the agent runs: there is nowhere to
    /// push the branch, nor a repository to open the pull request on.
    func refusePullRequestWithoutOrigin(_ w: WorkspaceContainer, _ req: TaskRequest) async throws {
        guard req.pullRequest else { return }
        let s = try await w.state()
        guard s.origin.isEmpty, s.problem == nil else { return }
        throw SoError(
            "\(w.name)'s checkout has no origin: a pull request needs one",
            hint: "run the task without --pr and take the work with so deployment --dir \(w.c.model.directory) fetch "
                + "(or apply); or start a workspace with --config GIT_REPO=https://github.com/OWNER/NAME")
    }

    /// The command the task runs (--command, else the spec's), with the text checked.
    func command(of w: WorkspaceContainer, _ req: TaskRequest) throws -> String {
        guard let command = req.command ?? w.spec.task, !command.trimmedSpaces.isEmpty else {
            throw SoError(
                "\(w.name) has no task command",
                hint:
                    "add 'task: COMMAND' (it reads the task from $TASK) under 'workspace:' in \(Path.join(w.c.model.directory, "spec.yml")), "
                    + "or pass --command")
        }
        guard !req.text.trimmedSpaces.isEmpty else {
            throw SoError.usage(
                "the task text is empty",
                hint: "say what the agent should do: so deployment --name N task \"make the login test pass\"")
        }
        return command
    }
}
