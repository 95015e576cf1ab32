import Foundation
import SoBasics
import SoWorkspace

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
        /// records the highest comment, review and review comment ids taken.
        case task(workspace: String, texts: [String], lastComment: Int, lastReview: Int, lastReviewComment: Int = 0)
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

    /// How long a review's inline comments wait for their review's own delivery (GitHub sends them apart, in no set
    /// order, within a second or so), and a review that asks no change is kept pending for its comments that come
    /// late: past it, a comment is taken alone and such a review is let go.
    public static let reviewGrace: TimeInterval = 300

    /// What an ask is, for the ids a thread keeps (a review comment's id is not an issue comment's).
    enum Kind: String {
        case comment
        case review
        case reviewComment = "review comment"
    }

    /// What one event asks for, before the threads are looked at.
    enum Intent: Equatable {
        case start(title: String, text: String)
        case ask(Kind, id: Int, text: String)
        /// A review's inline comment (not a reply in its thread): part of its review's task.
        case codeComment
        /// A review that asks no change: its inline comments go with it.
        case quietReview(String)
        case close(merged: Bool)
        case reply(String)
        case ignore(String)
    }

    /// The steps for `events` (pending, oldest first), given the loop's `threads`; `received` is when each delivery
    /// came (by its id; one not named counts as older than `reviewGrace`); `permissions` what GitHub said each
    /// sender `asker` names may do (by `GitHubPermission.key`; one not there could not be asked: its event waits).
    public static func plan(
        _ events: [GitHubEvent], threads: [GitHubLoopThread], config: GitHubLoopConfig, now: Date,
        received: [String: Date] = [:], permissions: [String: GitHubPermission] = [:]
    ) -> [Step] {
        var pass = Pass(threads: threads, config: config, now: now)
        pass.received = received
        pass.permissions = permissions
        pass.gather(events)
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
            return command(e, .comment, config: config)
        case ("pull_request_review_comment", "created"):
            // A reply in a review's thread is a command or nothing; the review's own comments go with the review.
            if e.inReplyTo != nil { return command(e, .reviewComment, config: config) }
            return e.commentReviewID == nil ? .ignore("a review comment of no review") : .codeComment
        case ("pull_request_review", "submitted"):
            guard e.reviewState == "changes_requested" else { return .quietReview("a review that requests no change") }
            guard mayAsk(e) else { return outsider(e, "a review's", config) }
            let body = e.reviewBody?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            return .ask(
                .review, id: e.reviewID ?? 0,
                text: "Changes requested by @\(e.sender) in a review of the pull request"
                    + (body.isEmpty ? "." : ":\n\n\(body)"))
        case ("pull_request", "closed"):
            return .close(merged: e.merged ?? false)
        default:
            return .ignore("\(e.event) \(e.action) is not one the loop acts on")
        }
    }

    /// Whether `e`'s association lets it ask at all: an owner's, a member's or a collaborator's (GitHub is asked
    /// next), or a bot's, whatever its association (GitHub gives an App's `NONE` or `CONTRIBUTOR`: `gate` decides by
    /// `bots:`, and a bot not named there is ignored, never replied to).
    static func mayAsk(_ e: GitHubEvent) -> Bool {
        trusted.contains(e.authorAssociation) || GitHubPermission.isBot(e.sender)
    }

    /// A comment: a command when it starts with the prefix (then a space or its end) and its author may give one.
    static func command(_ e: GitHubEvent, _ kind: Kind, config: GitHubLoopConfig) -> Intent {
        let body = (e.commentBody ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard body.hasPrefix(config.prefix) else { return .ignore("a comment, not a command") }
        let rest = body.dropFirst(config.prefix.count)
        guard rest.first?.isWhitespace ?? true else { return .ignore("a comment, not a command") }
        guard mayAsk(e) else { return outsider(e, "a comment's", config) }
        let ask = rest.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !ask.isEmpty else { return .ignore("\(config.prefix) with nothing after it") }
        let on = kind == .reviewComment ? e.commentPath.map { " on \(place($0, e.commentLine))" } ?? "" : ""
        return .ask(kind, id: e.commentID ?? 0, text: "Asked by @\(e.sender) in a comment\(on):\n\n\(ask)")
    }

    /// `path:line`, or the path alone for a comment on the whole file.
    static func place(_ path: String, _ line: Int?) -> String { path + (line.map { ":\($0)" } ?? "") }

    /// A review's inline comments as the task reads them: each one's `path:line`, then its body, in the order they
    /// were written (their ids).
    static func codeText(_ comments: [GitHubEvent]) -> String {
        guard !comments.isEmpty else { return "" }
        return "\n\nComments on the code:" + comments.map { "\n\n" + codeBlock($0) }.joined()
    }

    /// One inline comment: `path:line`, then its body on the lines after.
    static func codeBlock(_ c: GitHubEvent) -> String {
        place(c.commentPath ?? "(no file)", c.commentLine) + "\n"
            + (c.commentBody ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The sender whose permission on the repository GitHub must be asked before `e` acts (a label, a command, a
    /// review asking for changes, an inline comment taken alone), or nil: the event gives no task, its author's
    /// association refuses it already, or it is a bot's (named in `bots:` or not, no permission is asked).
    public static func asker(_ e: GitHubEvent, _ config: GitHubLoopConfig) -> String? {
        guard config.watches(e.repository), !GitHubPermission.isBot(e.sender) else { return nil }
        switch intent(e, config) {
        case .start, .ask: return e.sender
        case .codeComment: return trusted.contains(e.authorAssociation) ? e.sender : nil
        default: return nil
        }
    }

    /// Whether `e`'s sender may give the task `intent` asks: nil when they may, else what to do instead (a bot not
    /// in `bots:` is ignored, a sender below `trust:` gets one reply, one GitHub did not answer for waits).
    static func gate(_ e: GitHubEvent, _ config: GitHubLoopConfig, _ permissions: [String: GitHubPermission])
        -> Action?
    {
        if GitHubPermission.isBot(e.sender) {
            return config.bots.contains(e.sender.lowercased())
                ? nil : .ignore("@\(e.sender) is a bot the config's bots: does not name")
        }
        guard let p = permissions[GitHubPermission.key(e.repository, e.sender)] else {
            return .wait("what @\(e.sender) may do in \(e.repository) is not known yet (GitHub did not answer)")
        }
        guard p < config.trust else { return nil }
        let what =
            e.event == "issues" ? "The label \(config.label) was put by @\(e.sender)" : "Nothing ran for @\(e.sender)"
        return .reply(
            repository: e.repository, number: e.number,
            text: "\(what): so takes tasks only from people with \(config.trust.name) permission or more on "
                + "\(e.repository), and GitHub says @\(e.sender) has \(p.name). Nothing was started.")
    }

    /// Refused by its author's association alone (not an owner, member or collaborator: none can write), before
    /// GitHub is asked.
    static func outsider(_ e: GitHubEvent, _ whose: String, _ config: GitHubLoopConfig) -> Intent {
        .reply(
            "Nothing ran for @\(e.sender): so takes tasks only from people with \(config.trust.name) permission or more "
                + "on the repository (\(whose) author is \(e.authorAssociation.lowercased())).")
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
        var received: [String: Date] = [:]
        var permissions: [String: GitHubPermission] = [:]
        /// Reviews of this pass not taken before, and their inline comments (in the order written), which go with
        /// them whatever their step; the deliveries of those comments already put in a step.
        var reviewsHere: Set<Int> = []
        var comments: [Int: [GitHubEvent]] = [:]
        var attached: Set<String> = []

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
            // A fork's pull request is never the loop's (its number cannot be; this says so again).
            guard !(e.isPullRequest && e.headRepoFork == true) else { return nil }
            return threads.last {
                !$0.removed && $0.holds(e.repository, number: e.number, isPullRequest: e.isPullRequest)
            }
        }

        /// A thread whose task may have just opened `e`'s pull request, the loop not knowing its number yet: its
        /// branch is `e`'s head, in the repository itself (not a fork). Such an event waits for the number, which
        /// alone decides once known.
        func unnumbered(_ e: GitHubEvent) -> GitHubLoopThread? {
            guard e.isPullRequest, e.headRepoFork == false, let head = e.headRef else { return nil }
            return threads.last {
                !$0.removed && $0.pullRequest == nil && ($0.running || $0.step != nil)
                    && ($0.branch ?? "agent/\($0.workspace)") == head
                    && $0.repository.lowercased() == e.repository.lowercased()
            }
        }

        /// Finds the reviews of this pass and their inline comments.
        mutating func gather(_ events: [GitHubEvent]) {
            for e in events where config.watches(e.repository) {
                if e.event == "pull_request_review", e.action == "submitted", let id = e.reviewID,
                    id > (thread(e)?.lastReview ?? 0)
                {
                    reviewsHere.insert(id)
                }
                if intent(e, config) == .codeComment, let review = e.commentReviewID {
                    comments[review, default: []].append(e)
                }
            }
            for (k, v) in comments { comments[k] = v.sorted { ($0.commentID ?? 0) < ($1.commentID ?? 0) } }
        }

        mutating func take(_ e: GitHubEvent) {
            guard config.watches(e.repository) else { return add(.ignore("\(e.repository) is not in the config"), e) }
            let intent = intent(e, config)
            if intent == .codeComment, reviewsHere.contains(e.commentReviewID ?? 0) { return }
            switch intent {
            case .ignore(let why): add(.ignore(why), e)
            case .reply(let text): add(.reply(repository: e.repository, number: e.number, text: text), e)
            case .start(let title, let text): start(e, title: title, text: text)
            case .ask(.review, let id, let text):
                let code = comments[id] ?? []
                work(e, id: id, text: text + codeText(code), kind: .review, code: code.compactMap(\.commentID).max())
            case .ask(let kind, let id, let text): work(e, id: id, text: text, kind: kind)
            case .codeComment: codeComment(e)
            case .quietReview(let why): add(recent(e) ? .wait("\(why), kept for its comments") : .ignore(why), e)
            case .close(let merged): close(e, merged: merged)
            }
            if e.event == "pull_request_review", let id = e.reviewID, reviewsHere.contains(id) { attach(id, to: e) }
        }

        /// True when `e`'s sender may not give a task (`gate`): its step (ignore, reply or wait) added; a wait holds
        /// the issue's later work, in order.
        mutating func refused(_ e: GitHubEvent) -> Bool {
            guard let instead = gate(e, config, permissions) else { return false }
            if case .wait = instead {
                blocked.insert(thread(e)?.workspace ?? GitHubLoopThread.workspaceName(e.repository, issue: e.number))
            }
            add(instead, e)
            return true
        }

        /// Puts the inline comments of review `id` in the step that took the review (once).
        mutating func attach(_ id: Int, to e: GitHubEvent) {
            guard let i = steps.lastIndex(where: { $0.deliveries.contains(e.delivery) }) else { return }
            for c in comments[id] ?? [] where !attached.contains(c.delivery) {
                attached.insert(c.delivery)
                steps[i].deliveries.append(c.delivery)
            }
        }

        /// Whether the delivery came less than `reviewGrace` ago.
        func recent(_ e: GitHubEvent) -> Bool {
            received[e.delivery].map { now.timeIntervalSince($0) < reviewGrace } ?? false
        }

        /// An inline comment whose review is not in this pass: it waits for it (not holding the thread's other
        /// work), or is taken alone when the review was taken before or the grace is over (a trusted author's only).
        mutating func codeComment(_ e: GitHubEvent) {
            let review = e.commentReviewID ?? 0
            let reviewTaken = thread(e).map { review <= $0.lastReview } ?? false
            if !reviewTaken, recent(e) { return add(.wait("its review \(review) has not come yet"), e) }
            guard mayAsk(e) else {
                return add(.ignore("an inline comment of an outsider's review"), e)
            }
            work(
                e, id: e.commentID ?? 0,
                text: "A comment by @\(e.sender) on the pull request's code:\n\n" + codeBlock(e),
                kind: .reviewComment)
        }

        mutating func start(_ e: GitHubEvent, title: String, text: String) {
            let name = GitHubLoopThread.workspaceName(e.repository, issue: e.number)
            if let t = thread(e) { return add(.ignore("the issue has a workspace already: \(t.workspace)"), e) }
            if refused(e) { return }
            if let cap = config.budget.workspaces, startsWait || threads.filter({ !$0.removed }).count >= cap {
                startsWait = true
                blocked.insert(name)
                return add(.wait("\(cap) workspaces at once, the config's budget.workspaces"), e)
            }
            var t = GitHubLoopThread(repository: e.repository, issue: e.number, workspace: name)
            t.privateRepository = e.repositoryPrivate
            t.running = true
            t.tasks = 1
            t.startedAt = now
            threads.append(t)
            blocked.insert(name)
            add(.start(t, title: title, text: text), e)
        }

        mutating func work(_ e: GitHubEvent, id: Int, text: String, kind: Kind, code: Int? = nil) {
            guard let t = thread(e) else {
                let waiting = GitHubLoopThread.workspaceName(e.repository, issue: e.number)
                if !e.isPullRequest, blocked.contains(waiting) {
                    return add(.wait("the issue's workspace is not made yet (its label waits)"), e)
                }
                if let u = unnumbered(e) { return add(.wait("the pull request of \(u.workspace) is not known yet"), e) }
                return add(
                    .ignore(e.isPullRequest ? "not a pull request of the loop" : "no workspace for the issue"), e)
            }
            let key = "\(kind.rawValue)-\(id)"
            let last = [.comment: t.lastComment, .review: t.lastReview][kind] ?? t.lastReviewComment ?? 0
            if id > 0, taken.contains(key) || id <= last {
                return add(.ignore("\(kind.rawValue) \(id) was taken already"), e)
            }
            if id > 0 { taken.insert(key) }
            if refused(e) { return }
            if blocked.contains(t.workspace) { return add(.wait("a task of \(t.workspace) is under way"), e) }
            let ids = Ids(comment: t.lastComment, review: t.lastReview, reviewComment: t.lastReviewComment ?? 0)
                .with(kind, id, code: code)
            if let i = open[t.workspace] { return join(i, e, text: text, kind: kind, id: id, code: code) }
            open[t.workspace] = steps.count
            if let spent = spent(t) { return add(.refuse(workspace: t.workspace, reason: spent), e) }
            add(
                .task(
                    workspace: t.workspace, texts: [text], lastComment: ids.comment, lastReview: ids.review,
                    lastReviewComment: ids.reviewComment), e)
        }

        /// Another ask in the task (or refusal) gathered in step `i`.
        mutating func join(_ i: Int, _ e: GitHubEvent, text: String, kind: Kind, id: Int, code: Int?) {
            steps[i].deliveries.append(e.delivery)
            guard case .task(let ws, let texts, let c, let r, let rc) = steps[i].action else { return }
            let ids = Ids(comment: c, review: r, reviewComment: rc).with(kind, id, code: code)
            steps[i].action = .task(
                workspace: ws, texts: texts + [text], lastComment: ids.comment, lastReview: ids.review,
                lastReviewComment: ids.reviewComment)
        }

        mutating func close(_ e: GitHubEvent, merged: Bool) {
            guard let t = thread(e), e.isPullRequest else {
                if let u = unnumbered(e) { return add(.wait("the pull request of \(u.workspace) is not known yet"), e) }
                return add(.ignore("not a pull request of the loop"), e)
            }
            if blocked.contains(t.workspace) || open[t.workspace] != nil {
                blocked.insert(t.workspace)
                return add(.wait("a task of \(t.workspace) comes first"), e)
            }
            blocked.insert(t.workspace)
            if let i = threads.lastIndex(of: t) { threads[i].removed = true }
            add(.remove(workspace: t.workspace, merged: merged), e)
        }

        /// The highest ids a task took, of each kind.
        struct Ids {
            var comment: Int
            var review: Int
            var reviewComment: Int
            /// With an ask of `kind` and id `id` (and, for a review, its inline comments up to `code`).
            func with(_ kind: Kind, _ id: Int, code: Int?) -> Ids {
                var n = self
                switch kind {
                case .comment: n.comment = max(id, comment)
                case .review: n.review = max(id, review)
                case .reviewComment: n.reviewComment = max(id, reviewComment)
                }
                if let code { n.reviewComment = max(code, n.reviewComment) }
                return n
            }
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
