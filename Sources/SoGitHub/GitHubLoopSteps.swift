import Foundation
import SoBasics
import SoDeploy
import SoWorkspace

/// The steps that act, each crash-safe: the thread is saved with the step (`GitHubLoopStep`) before anything is
/// done, so a loop that dies at any line leaves either nothing done and no step recorded (its entries go back to
/// pending), a step recorded whose task the workspace does or does not hold, or the thread saved with the step's
/// end in `last`; `GitHubLoopExecutor.reconcileTaken` reads each.
extension GitHubLoopExecutor {
    func act(
        _ action: GitHubLoopPlanner.Action, _ mine: [GitHubInbox.Entry], _ stored: [GitHubLoopStore.Stored],
        now: Date
    ) async throws -> Ended {
        func over(_ ws: String) throws -> GitHubLoopStore.Stored {
            guard let s = stored.last(where: { $0.thread.workspace == ws }) else {
                throw SoError("no thread of \(ws) in the loop's store", hint: Self.hint)
            }
            return s
        }
        let step = GitHubLoopStep(
            deliveries: mine.map(\.event.delivery), kind: "", by: effects.identity, at: now)
        switch action {
        case .start(let t, let title, let text):
            return await start(t, over: stored.last { $0.thread.workspace == t.workspace }, step, title, text)
        case .task(let ws, let texts, let lastComment, let lastReview, let lastReviewComment):
            var s = step
            s.lastComment = lastComment
            s.lastReview = lastReview
            if lastReviewComment > 0 { s.lastReviewComment = lastReviewComment }
            return await task(try over(ws), s, GitHubLoopPlanner.taskText(texts), mine, now: now)
        case .remove(let ws, let merged):
            return await remove(try over(ws), step, merged: merged)
        case .reply(let repository, let number, let text):
            guard let issue = GitHubIssue("\(repository)#\(number)") else {
                throw SoError("no issue \(number) of \(repository) to reply on", hint: Self.hint)
            }
            try await effects.comment(issue, text)
        case .refuse(let ws, let reason):
            try await effects.comment(
                try Self.issue(try over(ws).thread),
                "No task ran for this: the workspace \(ws) reached its budget: \(reason).")
        case .ignore, .wait: break
        }
        return .done
    }

    static let hint = "see the loop's threads: kubectl -n so-github get configmaps -l so.dev/github-loop=thread"

    static func issue(_ t: GitHubLoopThread) throws -> GitHubIssue {
        guard let issue = GitHubIssue("\(t.repository)#\(t.issue)") else {
            throw SoError("the thread of \(t.workspace) names no issue", hint: hint)
        }
        return issue
    }

    /// The thread saved; nil when another loop changed it, or when the save failed (said: what the cluster holds
    /// then is read by the next pass's reconcile).
    func put(_ t: GitHubLoopThread, over: GitHubLoopStore.Stored?) async -> GitHubLoopStore.Stored? {
        do { return try await effects.save(t, over: over) } catch {
            say(
                "github: \(t.repository)#\(t.issue): the thread of \(t.workspace) was not saved: \(Self.oneLine(error))"
            )
            return nil
        }
    }

    /// `thread` saved with `step` ended `failed` in its `last`, and the step `failed` by `error`. A refusal of the
    /// workspace's record (`RecordGate`) is said on the issue too: nothing else tells whoever asked that nothing ran.
    func failing(
        _ thread: GitHubLoopThread, _ step: GitHubLoopStep, over: GitHubLoopStore.Stored, _ error: Error
    ) async -> Ended {
        if (error as? SoError)?.exitCode == RecordGate.refused, let issue = try? Self.issue(thread) {
            await bestEffort(issue, "the refusal's comment") {
                try await effects.comment(issue, Self.refused(thread.workspace))
            }
        }
        var t = thread
        t.step = nil
        t.last = step
        t.last?.state = "failed"
        return await put(t, over: over) == nil ? .left : .failed(error)
    }

    /// What the issue is told when the workspace's record holds a revision the loop refuses: none of the record's text
    /// (a teammate's, shown to whoever reads the issue), what the loop's keeper can do.
    static func refused(_ workspace: String) -> String {
        "Nothing ran for this: the cluster's record of the workspace `\(workspace)` holds a revision this loop refuses "
            + "(someone who may write in its namespace changed it). Whoever runs the loop sees why with "
            + "`so deployment --name \(workspace) diff`; tasks run again once the record's latest revision is one the "
            + "loop accepts (a rollback to a revision it ran)."
    }

    /// Saves the step (phase `up`), ups the workspace, saves the phase `task` (so a loop that reconciled the step
    /// meanwhile stops this one here), queues the task, then reacts and comments (best effort: the task runs).
    func start(
        _ t: GitHubLoopThread, over: GitHubLoopStore.Stored?, _ step: GitHubLoopStep, _ title: String, _ text: String
    ) async -> Ended {
        var s = step
        s.kind = "start"
        s.phase = "up"
        var plan = t
        plan.running = false
        plan.tasks = 0
        plan.step = s
        guard let before = await put(plan, over: over) else { return .again }
        var failed = plan
        failed.removed = true
        // A private repository is cloned by the loop and carried in: the workspace holds no token to clone it with.
        let carried = t.privateRepository == true
        do { try await effects.up(workspace: t.workspace, repository: t.repository, carried: carried) } catch {
            return await failing(failed, s, over: before, error)
        }
        plan.step?.phase = "task"
        guard let up = await put(plan, over: before) else { return .left }
        let issue: GitHubIssue
        let id: Int
        do {
            issue = try Self.issue(t)
            id = try await effects.task(
                workspace: t.workspace, text: text, title: title, pullRequest: true, issue: issue)
        } catch { return await failing(failed, s, over: up, error) }
        await bestEffort(issue, "the reaction") { try await effects.react(issue, comment: nil) }
        await bestEffort(issue, "the comment") {
            try await effects.comment(
                issue,
                "so made the workspace `\(t.workspace)` for this issue; its task \(id) runs there. "
                    + "See it: `so deployment --name \(t.workspace) status`")
        }
        var ran = t
        ran.taskIDs = [id]
        ran.last = s
        ran.last?.state = "done"
        return await put(ran, over: up) == nil ? .left : .done
    }

    /// The task `id` noted in the thread (its outcome is the loop's to comment when it ends), with the review
    /// comments it took, answered in their threads then.
    static func queued(_ id: Int, _ mine: [GitHubInbox.Entry], _ t: inout GitHubLoopThread) {
        t.taskIDs = (t.taskIDs ?? []) + [id]
        if let r = replies(id, mine) { t.replies = (t.replies ?? []) + [r] }
    }

    /// The review comments a task took, to answer in their threads when it ends: each one's thread's first comment
    /// (a reply's `in_reply_to_id`; GitHub hangs replies on it), once each; nil when it took none.
    static func replies(_ task: Int, _ mine: [GitHubInbox.Entry]) -> GitHubLoopReplies? {
        var comments: [Int] = []
        var pull = 0
        for e in mine.map(\.event) where e.event == "pull_request_review_comment" {
            guard let id = e.inReplyTo ?? e.commentID, !comments.contains(id) else { continue }
            comments.append(id)
            pull = e.number
        }
        return comments.isEmpty ? nil : GitHubLoopReplies(task: task, pullRequest: pull, comments: comments)
    }

    /// What GitHub is told once a task is queued: said when it fails, the step still done (its task runs).
    func bestEffort(_ issue: GitHubIssue, _ what: String, _ body: () async throws -> Void) async {
        do { try await body() } catch { say("github: \(issue): \(what) failed: \(Self.oneLine(error))") }
    }

    /// Saves the step (with the highest task id the thread knows), queues the task, reacts to each comment taken.
    func task(
        _ over: GitHubLoopStore.Stored, _ step: GitHubLoopStep, _ text: String, _ mine: [GitHubInbox.Entry],
        now: Date
    ) async -> Ended {
        var s = step
        s.kind = "task"
        s.after = over.thread.lastTask ?? over.thread.tasks
        var plan = over.thread
        plan.step = s
        guard let before = await put(plan, over: over) else { return .again }
        var t = over.thread
        t.lastComment = s.lastComment ?? t.lastComment
        t.lastReview = s.lastReview ?? t.lastReview
        t.lastReviewComment = s.lastReviewComment ?? t.lastReviewComment
        let id: Int
        do {
            id = try await effects.task(
                workspace: t.workspace, text: text, title: nil, pullRequest: t.pullRequest == nil,
                issue: try Self.issue(t))
        } catch { return await failing(t, s, over: before, error) }
        // 👀 on each comment taken: an issue's (or a pull request's conversation), and each inline comment on code.
        for e in mine {
            guard let cid = e.event.commentID, let on = GitHubIssue("\(e.event.repository)#\(e.event.number)")
            else { continue }
            switch e.event.event {
            case "issue_comment": await bestEffort(on, "the reaction") { try await effects.react(on, comment: cid) }
            case "pull_request_review_comment":
                await bestEffort(on, "the reaction") { try await effects.reactOnCode(on, comment: cid) }
            default: break
            }
        }
        t.running = true
        t.tasks += 1
        t.startedAt = t.startedAt ?? now
        // Whether the repository is private, as the asks say now (one made public since the label must not get logs).
        t.privateRepository = mine.compactMap(\.event.repositoryPrivate).last ?? t.privateRepository
        Self.queued(id, mine, &t)
        t.last = s
        t.last?.state = "done"
        return await put(t, over: before) == nil ? .left : .done
    }

    /// Saves the step, removes the workspace (refused when its work is neither pushed nor fetched), then comments.
    func remove(_ over: GitHubLoopStore.Stored, _ step: GitHubLoopStep, merged: Bool) async -> Ended {
        var s = step
        s.kind = "remove"
        var plan = over.thread
        plan.step = s
        guard let before = await put(plan, over: over) else { return .again }
        let t = over.thread
        let kept: String?
        do { kept = try await effects.down(workspace: t.workspace, repository: t.repository) } catch {
            return await failing(t, s, over: before, error)
        }
        var branch = t.branch.map { "its work is on the branch `\($0)`" } ?? "its work was pushed by its tasks"
        if let kept { branch += "; what it held that was not pushed is on the branch `\(kept)`" }
        let pr = t.pullRequest.map { " (pull request #\($0) \(merged ? "merged" : "closed"))" } ?? ""
        if let issue = GitHubIssue("\(t.repository)#\(t.issue)") {
            await bestEffort(issue, "the comment") {
                try await effects.comment(issue, "so removed the workspace `\(t.workspace)`\(pr); \(branch).")
            }
        }
        var gone = t
        gone.removed = true
        gone.running = false
        gone.last = s
        gone.last?.state = "done"
        return await put(gone, over: before) == nil ? .left : .done
    }
}
