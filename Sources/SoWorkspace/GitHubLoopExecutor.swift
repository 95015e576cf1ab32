import Foundation
import SoBasics

/// One pass of the GitHub loop (`so github loop --config F --once`): the threads whose task ended are brought up to
/// date, the inbox's pending entries are planned (`GitHubLoopPlanner`), and each step's entries are marked `taken`
/// (a compare-and-swap: a step whose entries another loop took is skipped) before it acts; then its thread is saved
/// and its entries marked `done` or `failed`. Every effect goes through `GitHubLoopEffects`. Each step is one line
/// (`say`), naming the issue, the step, the workspace and the deliveries: never a title, body, comment or token.
public struct GitHubLoopExecutor: Sendable {
    public let effects: any GitHubLoopEffects
    public let config: GitHubLoopConfig
    public let say: @Sendable (String) -> Void

    public init(effects: any GitHubLoopEffects, config: GitHubLoopConfig, say: @escaping @Sendable (String) -> Void) {
        self.effects = effects
        self.config = config
        self.say = say
    }

    /// One pass at `now`.
    public func pass(now: Date) async throws {
        var stored = try await effects.threads()
        if try await reconcile(stored) { stored = try await effects.threads() }
        let entries = try await effects.pending()
        var received: [String: Date] = [:]
        for e in entries { received[e.event.delivery] = e.receivedAt }
        let steps = GitHubLoopPlanner.plan(
            entries.map(\.event), threads: stored.map(\.thread), config: config, now: now, received: received)
        for step in steps {
            let mine = step.deliveries.compactMap { d in entries.first { $0.event.delivery == d } }
            guard let first = mine.first, mine.count == step.deliveries.count else { continue }
            let at = "github: \(first.event.repository)#\(first.event.number)"
            let ids = "(deliver\(mine.count == 1 ? "y" : "ies") \(step.deliveries.joined(separator: ", ")))"
            await run(step, mine, stored, at: at, ids: ids)
        }
    }

    /// Threads with a task under way whose tasks all ended: saved as not running, with the pull request, branch and
    /// cost their tasks report, and the loop's tasks that ended noted as reported; then, once saved, each of those
    /// gets its outcome comment on the issue, and the review comments it took a reply in their threads. True when a
    /// thread was saved.
    ///
    /// At most once: the ids are saved (a compare-and-swap) before anything is posted, so two loops never both post,
    /// and a loop restarted never posts again; a loop that dies between the save and the post, or a post GitHub
    /// refuses, leaves that outcome unsaid (the line says so; `so deployment --name W tasks` still shows it). A
    /// duplicate comment on every restart was the other choice.
    func reconcile(_ stored: [GitHubLoopStore.Stored]) async throws -> Bool {
        var changed = false
        for s in stored where s.thread.running && !s.thread.removed {
            let work: GitHubLoopWork
            do { work = try await effects.work(workspace: s.thread.workspace) } catch {
                say("github: \(s.thread.workspace): its tasks cannot be read: \(Self.oneLine(error))")
                continue
            }
            guard !work.running else { continue }
            var t = s.thread
            t.running = false
            t.pullRequest = work.pullRequest ?? t.pullRequest
            t.branch = work.branch ?? t.branch
            t.cost = max(t.cost, work.cost)
            let ours = Set(t.taskIDs ?? [])
            let said = Set(t.reported ?? [])
            let ended = work.tasks.filter { $0.ended && ours.contains($0.id) && !said.contains($0.id) }
            let ids = Set(ended.map(\.id))
            let replies = (t.replies ?? []).filter { ids.contains($0.task) }
            if !ended.isEmpty {
                t.reported = (t.reported ?? []) + ended.map(\.id)
                t.replies = t.replies?.filter { !ids.contains($0.task) }
                if t.replies?.isEmpty == true { t.replies = nil }
            }
            guard try await effects.save(t, over: s) else { continue }
            changed = true
            say("github: \(t.repository)#\(t.issue): \(t.workspace) is idle, its task ended")
            for task in ended { await report(task, t, replies: replies.filter { $0.task == task.id }) }
        }
        return changed
    }

    /// The outcome comment of a task that ended, on the thread's issue, and a reply in each review comment's thread
    /// it took; a refusal is one line, not retried.
    func report(_ task: GitHubLoopWork.Task, _ t: GitHubLoopThread, replies: [GitHubLoopReplies]) async {
        let at = "github: \(t.repository)#\(t.issue)"
        var tail = ""
        if task.state != "succeeded" {
            do { tail = try await effects.logTail(workspace: t.workspace, task: task.id) } catch {
                say("\(at): task \(task.id)'s log cannot be read, its outcome goes without: \(Self.oneLine(error))")
            }
        }
        do {
            try await effects.comment(
                try Self.issue(t), GitHubLoopReport.outcome(task, workspace: t.workspace, log: tail))
            say("\(at): task \(task.id) \(task.state), its outcome commented")
        } catch {
            say("\(at): task \(task.id)'s outcome was not commented: \(Self.oneLine(error))")
        }
        for r in replies {
            guard let pull = GitHubIssue("\(t.repository)#\(r.pullRequest)") else { continue }
            for c in r.comments {
                do {
                    try await effects.reply(pull, comment: c, GitHubLoopReport.reply(task, workspace: t.workspace))
                } catch {
                    say("\(at): no reply to review comment \(c): \(Self.oneLine(error))")
                }
            }
        }
    }

    func run(
        _ step: GitHubLoopPlanner.Step, _ mine: [GitHubInbox.Entry], _ stored: [GitHubLoopStore.Stored], at: String,
        ids: String
    ) async {
        switch step.action {
        case .wait(let why):
            return say("\(at): wait: \(why) \(ids)")
        case .ignore(let why):
            // best effort: an entry left pending is ignored again next pass
            for e in mine { _ = try? await effects.mark(e, state: "done") }
            return say("\(at): ignore: \(why) \(ids)")
        default: break
        }
        guard let taken = await take(mine) else { return say("\(at): skipped, taken by another loop \(ids)") }
        let what = Self.describe(step.action)
        var state = "done"
        do {
            try await act(step.action, mine, stored)
            say("\(at): \(what) \(ids)")
        } catch {
            state = "failed"
            say("\(at): \(what) failed: \(Self.oneLine(error)) \(ids)")
        }
        for e in taken {
            // nil: another loop changed it; said below
            let marked = try? await effects.mark(e, state: state)
            if marked == nil {
                say("\(at): delivery \(e.event.delivery) was changed by another loop; not marked \(state)")
            }
        }
    }

    /// Marks every entry `taken`; nil (the ones taken put back to pending) when another loop took one first.
    func take(_ entries: [GitHubInbox.Entry]) async -> [GitHubInbox.Entry]? {
        var taken: [GitHubInbox.Entry] = []
        for e in entries {
            // nil: another loop took it (the step is skipped)
            guard let t = try? await effects.mark(e, state: "taken") else {
                // best effort: one left taken waits for the next pass
                for back in taken { _ = try? await effects.mark(back, state: "pending") }
                return nil
            }
            taken.append(t)
        }
        return taken
    }

    static func describe(_ a: GitHubLoopPlanner.Action) -> String {
        switch a {
        case .start(let t, _, _): "start \(t.workspace)"
        case .task(let ws, let texts, _, _, _): "task \(ws)" + (texts.count > 1 ? " (\(texts.count) asks)" : "")
        case .remove(let ws, let merged): "remove \(ws) (pull request \(merged ? "merged" : "closed"))"
        case .reply: "reply"
        case .refuse(let ws, _): "refuse \(ws): its budget is spent"
        case .ignore: "ignore"
        case .wait: "wait"
        }
    }

    /// An error as one line of at most 300 characters: its message, then its hint.
    static func oneLine(_ error: Error) -> String {
        let text: String
        if let e = error as? SoError {
            text = e.message + (e.hint.map { "; hint: \($0)" } ?? "")
        } else {
            text = String(describing: error)
        }
        return String(text.map { $0.isNewline ? " " : $0 }.prefix(300))
    }
}

extension GitHubLoopExecutor {
    /// Runs one step; its thread is saved whether it worked or not (a start that failed leaves a removed thread, so
    /// a new label starts again; a task that failed leaves its comments taken).
    func act(_ action: GitHubLoopPlanner.Action, _ mine: [GitHubInbox.Entry], _ stored: [GitHubLoopStore.Stored])
        async throws
    {
        func over(_ ws: String) -> GitHubLoopStore.Stored? { stored.last { $0.thread.workspace == ws } }
        switch action {
        case .start(let t, let title, let text):
            var failed = t
            failed.running = false
            failed.removed = true
            try await saving(t, over: over(t.workspace), failed: failed) {
                try await start(t, title: title, text: text)
            } then: { id, t in
                t.taskIDs = [id]
            }
        case .task(let ws, let texts, let lastComment, let lastReview, let lastReviewComment):
            guard let s = over(ws) else { throw SoError("no thread of \(ws) in the loop's store", hint: Self.hint) }
            var t = s.thread
            t.lastComment = lastComment
            t.lastReview = lastReview
            if lastReviewComment > 0 { t.lastReviewComment = lastReviewComment }
            var ran = t
            ran.running = true
            ran.tasks += 1
            ran.startedAt = ran.startedAt ?? Date()
            try await saving(ran, over: s, failed: t) {
                try await task(t, GitHubLoopPlanner.taskText(texts), mine)
            } then: { id, t in
                t.taskIDs = (t.taskIDs ?? []) + [id]
                if let r = Self.replies(id, mine) { t.replies = (t.replies ?? []) + [r] }
            }
        case .remove(let ws, let merged):
            guard let s = over(ws) else { throw SoError("no thread of \(ws) in the loop's store", hint: Self.hint) }
            var gone = s.thread
            gone.removed = true
            gone.running = false
            try await saving(gone, over: s, failed: s.thread) { try await remove(s.thread, merged: merged) }
        case .reply(let repository, let number, let text):
            guard let issue = GitHubIssue("\(repository)#\(number)") else {
                throw SoError("no issue \(number) of \(repository) to reply on", hint: Self.hint)
            }
            try await effects.comment(issue, text)
        case .refuse(let ws, let reason):
            guard let s = over(ws) else { throw SoError("no thread of \(ws) in the loop's store", hint: Self.hint) }
            try await effects.comment(
                try Self.issue(s.thread), "No task ran for this: the workspace \(ws) reached its budget: \(reason).")
        case .ignore, .wait: break
        }
    }

    static let hint = "see the loop's threads: kubectl -n so-github get configmaps -l so.dev/github-loop=thread"

    static func issue(_ t: GitHubLoopThread) throws -> GitHubIssue {
        guard let issue = GitHubIssue("\(t.repository)#\(t.issue)") else {
            throw SoError("the thread of \(t.workspace) names no issue", hint: hint)
        }
        return issue
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

    /// Acts, then saves `thread` (`failed` when acting threw, and the error thrown again); `then` adds to the thread
    /// what acting gave (a task's id).
    func saving<T>(
        _ thread: GitHubLoopThread, over: GitHubLoopStore.Stored?, failed: GitHubLoopThread,
        _ body: () async throws -> T, then: (T, inout GitHubLoopThread) -> Void = { _, _ in }
    ) async throws {
        var t = thread
        var thrown: Error?
        do { then(try await body(), &t) } catch {
            thrown = error
            t = failed
        }
        let saved = try await effects.save(t, over: over)
        if let thrown { throw thrown }
        guard saved else {
            throw SoError("the thread of \(t.workspace) was changed by another loop meanwhile", hint: Self.hint)
        }
    }

    func start(_ t: GitHubLoopThread, title: String, text: String) async throws -> Int {
        let issue = try Self.issue(t)
        try await effects.up(workspace: t.workspace, repository: t.repository)
        let id = try await effects.task(workspace: t.workspace, text: text, title: title, issue: issue)
        try await effects.react(issue, comment: nil)
        try await effects.comment(
            issue,
            "so made the workspace `\(t.workspace)` for this issue; its task \(id) runs there. "
                + "See it: `so deployment --name \(t.workspace) status`")
        return id
    }

    func task(_ t: GitHubLoopThread, _ text: String, _ mine: [GitHubInbox.Entry]) async throws -> Int {
        let issue = try Self.issue(t)
        let id = try await effects.task(workspace: t.workspace, text: text, title: nil, issue: issue)
        for e in mine {
            guard let comment = e.event.commentID, e.event.event == "issue_comment",
                let on = GitHubIssue("\(e.event.repository)#\(e.event.number)")
            else { continue }
            try await effects.react(on, comment: comment)
        }
        return id
    }

    func remove(_ t: GitHubLoopThread, merged: Bool) async throws {
        try await effects.down(workspace: t.workspace)
        let branch = t.branch.map { "its work is on the branch `\($0)`" } ?? "its work was pushed by its tasks"
        let pr = t.pullRequest.map { " (pull request #\($0) \(merged ? "merged" : "closed"))" } ?? ""
        try await effects.comment(
            try Self.issue(t), "so removed the workspace `\(t.workspace)`\(pr); \(branch).")
    }
}
