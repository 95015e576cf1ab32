import Foundation
import SoBasics

/// What the GitHub loop does with the inbox's pending deliveries, oldest first: pure (no clock but `now`, no
/// cluster, no GitHub), so every case is a test. Events of one issue (and of the pull request its tasks opened) are
/// serialized: while a task of the thread runs, or anything of it waits, its later work waits too (the entry stays
/// pending in the inbox, in order); comments and reviews that arrive together become one task. A comment or review
/// whose id a task took already never runs again. The texts of issues, comments and reviews are data for the
/// agent: the plan carries them, nothing here or in the executor hands them to a shell.
public enum GitHubLoopPlanner {
    public struct Step: Sendable, Equatable {
        public var action: Action
        /// The inbox's deliveries the step takes (marked `taken` before it runs, `done` or `failed` after); a
        /// `wait` leaves its one delivery pending.
        public var deliveries: [String]
    }

    public enum Action: Sendable, Equatable {
        /// A workspace for the issue (the thread, not yet recorded) and its first task, with `--issue` and `--pr`.
        case start(GitHubLoopThread, title: String, text: String)
        /// The next task of `workspace`, from one or more comments and reviews (`texts`, in order); the thread then
        /// records the highest comment and review ids taken.
        case task(workspace: String, texts: [String], lastComment: Int, lastReview: Int)
        /// The pull request was closed: the workspace goes, its work kept on a branch first.
        case remove(workspace: String, merged: Bool)
        /// One comment on `number` saying why nothing ran (an outsider's command).
        case reply(repository: String, number: Int, text: String)
        /// The workspace's budget is spent: one comment on its issue saying which, and no task.
        case refuse(workspace: String, reason: String)
        /// Not the loop's (another label, repository, action; a fork): done, nothing said.
        case ignore(String)
        /// Left pending, to be planned again: a task of the thread runs, or the cap on workspaces is reached.
        case wait(String)
    }

    public static let trusted: Set<String> = ["OWNER", "MEMBER", "COLLABORATOR"]

    /// What one event asks for, before the threads are looked at.
    enum Intent: Equatable {
        case start(title: String, text: String)
        case comment(id: Int, text: String)
        case review(id: Int, text: String)
        case close(merged: Bool)
        case reply(String)
        case ignore(String)
    }

    /// The steps for `events` (pending, oldest first), given the loop's `threads`.
    public static func plan(
        _ events: [GitHubEvent], threads: [GitHubLoopThread], config: GitHubLoopConfig, now: Date
    ) -> [Step] {
        var pass = Pass(threads: threads, config: config, now: now)
        for e in events { pass.take(e) }
        return pass.steps
    }

    /// Reads one event: which intent, from its kind, action, author and text.
    static func intent(_ e: GitHubEvent, _ config: GitHubLoopConfig) -> Intent {
        if !config.forks, e.isPullRequest, e.event.hasPrefix("pull_request"), e.headRepoFork != false {
            return .ignore("a pull request from a fork (forks: true in the config takes them)")
        }
        switch (e.event, e.action) {
        case ("issues", "labeled"):
            guard !e.isPullRequest, e.label?.lowercased() == config.label.lowercased() else {
                return .ignore("another label")
            }
            return .start(
                title: e.title ?? "",
                text: [e.title ?? "", e.body ?? ""].filter { !$0.isEmpty }.joined(separator: "\n\n"))
        case ("issue_comment", "created"):
            return command(e, id: e.commentID, text: e.commentBody, config: config)
        case ("pull_request_review", "submitted"):
            guard e.reviewState == "changes_requested" else { return .ignore("a review that requests no change") }
            guard trusted.contains(e.authorAssociation) else { return outsider(e, "a review's") }
            let body = e.reviewBody?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            return .review(
                id: e.reviewID ?? 0,
                text: "Changes requested by @\(e.sender) in a review of the pull request"
                    + (body.isEmpty ? "." : ":\n\n\(body)"))
        case ("pull_request", "closed"):
            return .close(merged: e.merged ?? false)
        default:
            return .ignore("\(e.event) \(e.action) is not one the loop acts on")
        }
    }

    /// A comment: a command when it starts with the prefix (then a space or its end) and its author may give one.
    static func command(_ e: GitHubEvent, id: Int?, text: String?, config: GitHubLoopConfig) -> Intent {
        let body = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard body.hasPrefix(config.prefix) else { return .ignore("a comment, not a command") }
        let rest = body.dropFirst(config.prefix.count)
        guard rest.first?.isWhitespace ?? true else { return .ignore("a comment, not a command") }
        guard trusted.contains(e.authorAssociation) else { return outsider(e, "a comment's") }
        let ask = rest.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !ask.isEmpty else { return .ignore("\(config.prefix) with nothing after it") }
        return .comment(id: id ?? 0, text: "Asked by @\(e.sender) in a comment:\n\n\(ask)")
    }

    static func outsider(_ e: GitHubEvent, _ whose: String) -> Intent {
        .reply(
            "Nothing ran for @\(e.sender): only the repository's owners, members and collaborators can give so a task "
                + "(\(whose) author is \(e.authorAssociation.lowercased())).")
    }

    /// The task's text of several asks, in the order they came.
    public static func taskText(_ texts: [String]) -> String { texts.joined(separator: "\n\n---\n\n") }
}

extension GitHubLoopPlanner {
    /// One planning pass: the threads as they will be once the steps so far have run.
    struct Pass {
        var threads: [GitHubLoopThread]
        let config: GitHubLoopConfig
        let now: Date
        var steps: [Step] = []
        /// Workspaces whose later work waits: a task runs or is planned to start, or something of theirs waits.
        var blocked: Set<String> = []
        /// The step a workspace's next task (or its refusal) is being gathered in.
        var open: [String: Int] = [:]
        /// A start waited for the cap: every later start waits too, in order.
        var startsWait = false
        var taken: Set<String> = []

        init(threads: [GitHubLoopThread], config: GitHubLoopConfig, now: Date) {
            self.threads = threads
            self.config = config
            self.now = now
            blocked = Set(threads.filter { ($0.running || $0.step != nil) && !$0.removed }.map(\.workspace))
        }

        mutating func add(_ action: Action, _ e: GitHubEvent) {
            steps.append(Step(action: action, deliveries: [e.delivery]))
        }

        func thread(_ e: GitHubEvent) -> GitHubLoopThread? {
            threads.last {
                !$0.removed
                    && $0.holds(e.repository, number: e.number, isPullRequest: e.isPullRequest, headRef: e.headRef)
            }
        }

        mutating func take(_ e: GitHubEvent) {
            guard config.watches(e.repository) else { return add(.ignore("\(e.repository) is not in the config"), e) }
            switch intent(e, config) {
            case .ignore(let why): add(.ignore(why), e)
            case .reply(let text): add(.reply(repository: e.repository, number: e.number, text: text), e)
            case .start(let title, let text): start(e, title: title, text: text)
            case .comment(let id, let text): work(e, id: id, text: text, review: false)
            case .review(let id, let text): work(e, id: id, text: text, review: true)
            case .close(let merged): close(e, merged: merged)
            }
        }

        mutating func start(_ e: GitHubEvent, title: String, text: String) {
            let name = GitHubLoopThread.workspaceName(e.repository, issue: e.number)
            if let t = thread(e) { return add(.ignore("the issue has a workspace already: \(t.workspace)"), e) }
            if let cap = config.budget.workspaces, startsWait || threads.filter({ !$0.removed }).count >= cap {
                startsWait = true
                blocked.insert(name)
                return add(.wait("\(cap) workspaces at once, the config's budget.workspaces"), e)
            }
            var t = GitHubLoopThread(repository: e.repository, issue: e.number, workspace: name)
            t.running = true
            t.tasks = 1
            t.startedAt = now
            threads.append(t)
            blocked.insert(name)
            add(.start(t, title: title, text: text), e)
        }

        mutating func work(_ e: GitHubEvent, id: Int, text: String, review: Bool) {
            guard let t = thread(e) else {
                let waiting = GitHubLoopThread.workspaceName(e.repository, issue: e.number)
                if !e.isPullRequest, blocked.contains(waiting) {
                    return add(.wait("the issue's workspace waits for the cap on workspaces"), e)
                }
                return add(
                    .ignore(e.isPullRequest ? "not a pull request of the loop" : "no workspace for the issue"), e)
            }
            let key = "\(review ? "review" : "comment")-\(id)"
            if id > 0, taken.contains(key) || id <= (review ? t.lastReview : t.lastComment) {
                return add(.ignore("\(review ? "review" : "comment") \(id) was taken already"), e)
            }
            if id > 0 { taken.insert(key) }
            if blocked.contains(t.workspace) { return add(.wait("a task of \(t.workspace) is under way"), e) }
            if let i = open[t.workspace] { return join(i, e, id: id, text: text, review: review) }
            open[t.workspace] = steps.count
            if let spent = spent(t) { return add(.refuse(workspace: t.workspace, reason: spent), e) }
            add(
                .task(
                    workspace: t.workspace, texts: [text], lastComment: review ? t.lastComment : max(id, t.lastComment),
                    lastReview: review ? max(id, t.lastReview) : t.lastReview), e)
        }

        /// Another ask in the task (or refusal) gathered in step `i`.
        mutating func join(_ i: Int, _ e: GitHubEvent, id: Int, text: String, review: Bool) {
            steps[i].deliveries.append(e.delivery)
            guard case .task(let ws, let texts, let lastComment, let lastReview) = steps[i].action else { return }
            steps[i].action = .task(
                workspace: ws, texts: texts + [text], lastComment: review ? lastComment : max(id, lastComment),
                lastReview: review ? max(id, lastReview) : lastReview)
        }

        mutating func close(_ e: GitHubEvent, merged: Bool) {
            guard let t = thread(e), e.isPullRequest else { return add(.ignore("not a pull request of the loop"), e) }
            if blocked.contains(t.workspace) || open[t.workspace] != nil {
                blocked.insert(t.workspace)
                return add(.wait("a task of \(t.workspace) comes first"), e)
            }
            blocked.insert(t.workspace)
            if let i = threads.lastIndex(of: t) { threads[i].removed = true }
            add(.remove(workspace: t.workspace, merged: merged), e)
        }

        /// Which budget of the thread is spent, if one is.
        func spent(_ t: GitHubLoopThread) -> String? {
            let b = config.budget
            if let n = b.tasks, t.tasks >= n { return "its \(n) tasks (budget.tasks) are spent" }
            if let c = b.cost, t.cost >= c {
                return
                    "its cost, $\(String(format: "%.2f", t.cost)), reached budget.cost ($\(String(format: "%.2f", c)))"
            }
            if let w = b.wallClock, let s = t.startedAt, now.timeIntervalSince(s) >= w {
                return "its wall-clock budget (\(DurationText.short(Int(w)))) since the first task is spent"
            }
            return nil
        }
    }
}
