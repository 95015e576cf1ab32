import Foundation
import SoBasics
import SoKube
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// Who may give the loop a task (issue 64): GitHub's permission of the sender on the repository, at least the
/// config's `trust:`, whatever its `author_association` says; bots only when named; pull requests by number only.
@Suite struct GitHubLoopTrustTests {
    typealias P = GitHubLoopPlannerTests
    typealias A = GitHubLoopPlanner.Action

    static func by(_ login: String, _ e: GitHubEvent) -> GitHubEvent {
        var e = e
        e.sender = login
        return e
    }
    static func plan(
        _ events: [GitHubEvent], _ threads: [GitHubLoopThread], _ permissions: [String: GitHubPermission],
        config: GitHubLoopConfig = P.config
    ) -> [A] {
        GitHubLoopPlanner.plan(
            events, threads: threads, config: config, now: P.now,
            permissions: Dictionary(uniqueKeysWithValues: permissions.map { (GitHubPermission.key(P.repo, $0), $1) })
        ).map(\.action)
    }
    static func refusal(_ what: String, _ login: String, has: String, trust: String = "write") -> A {
        .reply(
            repository: P.repo, number: 52,
            text: "\(what): so takes tasks only from people with \(trust) permission or more on \(P.repo), and GitHub "
                + "says @\(login) has \(has). Nothing was started.")
    }

    @Test func aLabelStartsOnlyForAWriterWhateverTheIssuesAuthorIs() {
        // The triager's label on an owner's issue (the association is the issue's author's, not the sender's).
        let triaged = Self.by("triager", P.labeled("d1"))
        #expect(
            Self.plan([triaged], [], ["triager": .triage])
                == [Self.refusal("The label so was put by @triager", "triager", has: "triage")])
        // An issue template adding the label when an outsider opens the issue: the outsider is the sender.
        var templated = Self.by("stranger", P.labeled("d2"))
        templated.authorAssociation = "NONE"
        #expect(
            Self.plan([templated], [], ["stranger": .read])
                == [Self.refusal("The label so was put by @stranger", "stranger", has: "read")])
        #expect(Self.plan([Self.by("dev", P.labeled("d3"))], [], ["dev": .write]).count == 1)
        guard case .start? = Self.plan([Self.by("dev", P.labeled("d3"))], [], ["dev": .write]).first else {
            Issue.record("a writer's label starts the workspace")
            return
        }
    }

    @Test func aMembersOrCollaboratorsCommandNeedsWriteOnTheRepository() {
        let thread = P.thread()
        let readOnly = Self.by("reader", P.comment("d1", 100, "/so x", who: "COLLABORATOR"))
        let noAccess = Self.by("member", P.comment("d2", 101, "/so y", who: "MEMBER"))
        #expect(
            Self.plan([readOnly, noAccess], [thread], ["reader": .read, "member": .none]) == [
                Self.refusal("Nothing ran for @reader", "reader", has: "read"),
                Self.refusal("Nothing ran for @member", "member", has: "none"),
            ])
        let writer = Self.by("dev", P.comment("d3", 102, "/so z", who: "MEMBER"))
        #expect(
            Self.plan([writer], [thread], ["dev": .write]) == [
                .task(workspace: P.ws, texts: ["Asked by @dev in a comment:\n\nz"], lastComment: 102, lastReview: 0)
            ])
        var strict = P.config
        strict.trust = .maintain
        #expect(
            Self.plan([writer], [thread], ["dev": .write], config: strict) == [
                Self.refusal("Nothing ran for @dev", "dev", has: "write", trust: "maintain")
            ])
        #expect(Self.plan([writer], [thread], ["dev": .admin], config: strict).count == 1)
    }

    @Test func aReadOnlyReviewersChangesAreOneReplyWithItsInlineComments() {
        let review = Self.by("reader", P.review("r1", 5))
        let inline = Self.by("reader", P.inline("c1", 901, review: 5))
        let steps = GitHubLoopPlanner.plan(
            [review, inline], threads: [P.thread()], config: P.config, now: P.now,
            permissions: [GitHubPermission.key(P.repo, "reader"): .read])
        #expect(
            steps == [
                .init(
                    action: .reply(
                        repository: P.repo, number: 7,
                        text: "Nothing ran for @reader: so takes tasks only from people with write permission or more "
                            + "on \(P.repo), and GitHub says @reader has read. Nothing was started."),
                    deliveries: ["r1", "c1"])
            ])
    }

    @Test func aSenderGitHubDidNotAnswerForWaitsAndHoldsTheIssuesLaterWork() {
        let first = Self.by("dev", P.comment("d1", 100, "/so x"))
        let second = Self.by("other", P.comment("d2", 101, "/so y"))
        #expect(
            Self.plan([first, second], [P.thread()], ["other": .write]) == [
                .wait("what @dev may do in \(P.repo) is not known yet (GitHub did not answer)"),
                .wait("a task of \(P.ws) is under way"),
            ])
        #expect(
            Self.plan([Self.by("dev", P.labeled("d3")), Self.by("other", P.comment("d4", 102, "/so y"))], [], [:]) == [
                .wait("what @dev may do in \(P.repo) is not known yet (GitHub did not answer)"),
                .wait("the issue's workspace is not made yet (its label waits)"),
            ])
    }

    @Test func botsActOnlyWhenTheConfigNamesThem() {
        let bot = Self.by("renovate[bot]", P.labeled("d1"))
        #expect(
            Self.plan([bot], [], ["renovate[bot]": .admin])
                == [.ignore("@renovate[bot] is a bot the config's bots: does not name")])
        var config = P.config
        config.bots = ["renovate[bot]"]
        guard case .start? = Self.plan([bot], [], [:], config: config).first else {
            Issue.record("a named bot's label starts, no permission asked")
            return
        }
        #expect(GitHubLoopPlanner.asker(bot, config) == nil, "no permission is asked of a bot")
    }

    /// A bot's `/so` comes with the association GitHub gives an App (`NONE`, or `CONTRIBUTOR`): named in `bots:`, it
    /// acts; not named, it is ignored without a reply (a reply to a bot may start another bot's answer), whatever its
    /// association. Found on the real node (issue 64, item 7): both got the outsider's reply.
    @Test func aBotsCommandActsOnlyWhenNamedWhateverItsAssociation() {
        let thread = P.thread()
        let named = Self.by("helper[bot]", P.comment("d1", 100, "/so bump it", who: "NONE"))
        let other = Self.by("spam[bot]", P.comment("d2", 101, "/so mine", who: "CONTRIBUTOR"))
        var config = P.config
        config.bots = ["helper[bot]"]
        let actions = Self.plan([named, other], [thread], [:], config: config)
        guard actions.count == 2, case .task(_, let texts, _, _, _) = actions[0] else {
            Issue.record("a named bot's /so is a task: \(actions)")
            return
        }
        #expect(texts == ["Asked by @helper[bot] in a comment:\n\nbump it"])
        #expect(actions[1] == .ignore("@spam[bot] is a bot the config's bots: does not name"))
    }

    @Test func onlyTheSendersOfTaskGivingEventsAreAsked() {
        let c = P.config
        #expect(GitHubLoopPlanner.asker(Self.by("dev", P.labeled("d1")), c) == "dev")
        #expect(GitHubLoopPlanner.asker(Self.by("dev", P.labeled("d1", label: "bug")), c) == nil)
        #expect(GitHubLoopPlanner.asker(Self.by("dev", P.comment("d2", 1, "/so x")), c) == "dev")
        #expect(GitHubLoopPlanner.asker(P.comment("d3", 2, "/so x", who: "NONE"), c) == nil, "refused early")
        #expect(GitHubLoopPlanner.asker(P.comment("d4", 3, "thanks"), c) == nil, "not a command")
        #expect(GitHubLoopPlanner.asker(P.review("r1", 5, state: "approved"), c) == nil)
        #expect(GitHubLoopPlanner.asker(P.review("r2", 6), c) == "octocat")
        var elsewhere = P.labeled("d5")
        elsewhere.repository = "acme/other"
        #expect(GitHubLoopPlanner.asker(elsewhere, c) == nil)
    }

    @Test func githubsAnswerIsReadByRoleThenBasePermission() throws {
        func answer(_ text: String) throws -> GitHubPermission {
            GitHubPermission(answer: try JSON.parse(Data(text.utf8)))
        }
        #expect(try answer(#"{"permission":"write","role_name":"maintain"}"#) == .maintain)
        #expect(try answer(#"{"permission":"read","role_name":"triage"}"#) == .triage)
        #expect(try answer(#"{"permission":"write","role_name":"release-managers"}"#) == .write, "a custom role")
        #expect(try answer(#"{"permission":"admin"}"#) == .admin)
        #expect(try answer(#"{"message":"Not Found"}"#) == GitHubPermission.none)
        #expect(GitHubPermission.read < .triage && .triage < .write && .write < .maintain)
    }

    @Test func pullRequestsAreTheLoopsByNumberOnly() {
        // The task that opens the pull request still runs: the loop does not know its number yet.
        var opening = P.thread(running: true)
        opening.pullRequest = nil
        opening.branch = nil
        var close = P.event("d1", "pull_request", "closed", number: 8, pr: true) { $0.merged = true }
        #expect(
            Self.plan([close], [opening], [:]) == [.wait("the pull request of \(P.ws) is not known yet")],
            "its branch is the loop's: it waits for the number")
        // Once the number is known, it alone decides.
        #expect(Self.plan([close], [P.thread()], [:]) == [.ignore("not a pull request of the loop")])
        close.number = 7
        #expect(Self.plan([close], [P.thread()], [:]) == [.remove(workspace: P.ws, merged: true)])
        // A fork's pull request named like the loop's branch neither waits nor acts.
        var fork = close
        fork.number = 8
        fork.headRepoFork = true
        var open = P.config
        open.forks = true
        #expect(Self.plan([fork], [opening], [:], config: open) == [.ignore("not a pull request of the loop")])
        fork.number = 7
        #expect(Self.plan([fork], [P.thread()], [:], config: open) == [.ignore("not a pull request of the loop")])
    }

    // MARK: a pass asks GitHub

    typealias X = GitHubLoopExecutorTests

    @Test func aPassAsksEachSenderOnceAndATriagersLabelGetsOneReplyAndNoWorkspace() async throws {
        // A label on issue 13, and a /so on issue 12, which has a workspace.
        var first = X.event("d1", "issues", "labeled", number: 13) { $0.label = "so" }
        first.sender = "triager"
        var again = X.comment("d2", 40, "go on")
        again.sender = "triager"
        let fake = X.Fake([first, again], threads: [X.thread(running: false)])
        await fake.set(permissions: ["triager": .triage])
        let lines = try await X.pass(fake)
        #expect(await fake.asked == ["acme/web triager"], "once for the pass, for the label and the comment")
        #expect(
            lines == [
                "github: acme/web#13: reply (delivery d1)", "github: acme/web#12: reply (delivery d2)",
            ])
        let calls = await fake.calls
        #expect(!calls.contains { $0.hasPrefix("up ") || $0.hasPrefix("task ") }, "nothing started")
        #expect(
            calls.filter { $0.hasPrefix("comment ") } == [
                "comment acme/web#13: The label so was put by @triager: so takes tasks only from people with write "
                    + "permission or more on acme/web, and GitHub says @triager has triage. Nothing was started.",
                "comment acme/web#12: Nothing ran for @triager: so takes tasks only from people with write "
                    + "permission or more on acme/web, and GitHub says @triager has triage. Nothing was started.",
            ])
        #expect(await fake.states() == ["d1=done", "d2=done"])
    }

    @Test func aPermissionGitHubDoesNotGiveLeavesTheDeliveryPendingAndSaysSo() async throws {
        let fake = X.Fake([X.labeled("d1")])
        await fake.set(failing: ["permission of octocat"])
        let lines = try await X.pass(fake)
        #expect(lines.count == 2)
        #expect(
            lines.first?.hasPrefix("github: acme/web#12: what @octocat may do is not known: cannot permission") == true)
        #expect(lines.last?.hasPrefix("github: acme/web#12: wait") == true)
        #expect(await fake.calls.allSatisfy { !$0.hasPrefix("up ") })
        #expect(await fake.states() == ["d1=pending"])
        await fake.set(failing: [])
        _ = try await X.pass(fake)
        #expect(await fake.states() == ["d1=done"], "the next pass asks again, and starts")
    }

    // MARK: what an outcome comment shows

    /// A failed task of `thread` seen ended by a pass with `config`: the calls after it.
    static func failedTaskEnds(_ thread: GitHubLoopThread, config: GitHubLoopConfig = X.config) async throws -> [String]
    {
        var t = thread
        t.running = true
        t.taskIDs = [3]
        let fake = X.Fake([], threads: [t])
        await fake.set(work: GitHubLoopWork(running: false, tasks: [X.failed]), log: "echo $GITHUB_TOKEN | fold -w8\n")
        try await GitHubLoopExecutor(effects: fake, config: config, say: { _ in }).pass(now: X.now)
        return await fake.calls
    }

    @Test func aPublicRepositorysFailedTaskGetsNoLogTailUnlessTheConfigSays() async throws {
        var publicThread = X.thread(running: true)
        publicThread.privateRepository = false
        let withheld = GitHubLoopReport.outcome(X.failed, workspace: X.ws, log: "", withheld: true)
        #expect(withheld.contains("Its log is not posted on a public repository") && !withheld.contains("fold"))
        let calls = try await Self.failedTaskEnds(publicThread)
        #expect(!calls.contains { $0.hasPrefix("logTail") }, "the log is not even read")
        #expect(calls.contains("comment acme/web#12: \(withheld)"))
        var unknown = publicThread
        unknown.privateRepository = nil
        #expect(try await Self.failedTaskEnds(unknown).contains("comment acme/web#12: \(withheld)"), "unsaid: public")
        // post-logs: true, or a private repository: the tail, scrubbed as before.
        var config = X.config
        config.postLogs = true
        let posted = GitHubLoopReport.outcome(X.failed, workspace: X.ws, log: "echo $GITHUB_TOKEN | fold -w8\n")
        #expect(try await Self.failedTaskEnds(publicThread, config: config).contains("comment acme/web#12: \(posted)"))
        #expect(try await Self.failedTaskEnds(X.thread(running: true)).contains("comment acme/web#12: \(posted)"))
    }

    /// A repository made public after its label: the next task's ask says so, and that task's failure posts no log
    /// (the thread's flag was read once, at the label, and a public repository's failed task got its log tail).
    @Test func aRepositoryMadePublicSinceTheLabelGetsNoLogTail() async throws {
        var ask = X.comment("d2", 60, "go")
        ask.repositoryPrivate = false
        let fake = X.Fake([ask], threads: [X.thread(running: false)])
        #expect(await fake.thread()?.privateRepository == true)
        _ = try await X.pass(fake)
        let t = try #require(await fake.thread())
        #expect(t.privateRepository == false && t.taskIDs == [3], "\(t)")
        let calls = try await Self.failedTaskEnds(t)
        #expect(!calls.contains { $0.hasPrefix("logTail") }, "the log is not even read: \(calls)")
        #expect(
            calls.contains(
                "comment acme/web#12: \(GitHubLoopReport.outcome(X.failed, workspace: X.ws, log: "", withheld: true))"))
    }

    @Test func theLabelsDeliverySaysWhetherTheRepositoryIsPrivate() {
        var e = P.labeled("d1")
        e.repositoryPrivate = true
        guard case .start(let t, _, _)? = Self.plan([e], [], ["octocat": .write]).first else {
            Issue.record("a start")
            return
        }
        #expect(t.privateRepository == true)
    }
}
