import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoDeploy
@testable import SoGitHub
@testable import SoWorkspace

/// A whole pass of the GitHub loop over fake effects that log every call: each test states every call made, so an
/// unexpected one fails it, and the lines said (never a title, body or comment).
@Suite struct GitHubLoopExecutorTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let repo = "acme/web"
    static let ws = GitHubLoopThread.workspaceName(repo, issue: 12)
    static var config: GitHubLoopConfig {
        GitHubLoopConfig(repositories: [repo], label: "so", stack: "agent-workspace")
    }
    static let hostile = "Fix it.\n$(rm -rf /) ghp_secret0123456789"

    /// Which loop a fake is (the same world, another loop's identity between passes).
    final class Who: @unchecked Sendable {
        private let lock = NSLock()
        private var kept = "loop-a"
        var name: String {
            get { lock.withLock { kept } }
            set { lock.withLock { kept = newValue } }
        }
    }

    /// A loop that dies: every call after the `dieAfter`-th reaches nothing (it throws, unlogged).
    struct Died: Error {}

    actor Fake: GitHubLoopEffects {
        var entries: [GitHubInbox.Entry] = []
        var stored: [GitHubLoopStore.Stored] = []
        var calls: [String] = []
        /// Deliveries another loop takes first.
        var stolen: Set<String> = []
        /// Effects that throw.
        var failing: Set<String> = []
        var work = GitHubLoopWork(running: false)
        var log = ""
        var version = 100
        var nextTask = 3
        /// The workspace's record is in the cluster (a down removes it).
        var existing = true
        /// The branch a down pushed the workspace's unpushed work to.
        var kept: String?
        /// The saves (by their number, from 1) that another loop's write beats.
        var raced: Set<Int> = []
        var saves = 0
        var dieAfter: Int?
        var now = GitHubLoopExecutorTests.now
        nonisolated let who = Who()
        nonisolated var identity: String { who.name }

        init(_ events: [GitHubEvent], threads: [GitHubLoopThread] = []) {
            for (i, e) in events.enumerated() {
                entries.append(
                    GitHubInbox.Entry(
                        secretName: GitHubInbox.secretName(e.delivery), event: e,
                        receivedAt: GitHubLoopExecutorTests.now.addingTimeInterval(Double(i)), state: "pending",
                        resourceVersion: "\(i + 1)"))
            }
            stored = threads.map { GitHubLoopStore.Stored(thread: $0, resourceVersion: "t1") }
        }
        func set(
            stolen: Set<String> = [], failing: Set<String> = [], work: GitHubLoopWork? = nil, log: String? = nil,
            raced: Set<Int> = [], dieAfter: Int? = nil
        ) {
            self.stolen = stolen
            self.failing = failing
            self.raced = raced
            self.dieAfter = dieAfter
            if let work { self.work = work }
            if let log { self.log = log }
        }
        func set(now: Date) { self.now = now }
        func set(kept: String?) { self.kept = kept }
        func add(_ e: GitHubEvent) {
            entries.append(
                GitHubInbox.Entry(
                    secretName: GitHubInbox.secretName(e.delivery), event: e, receivedAt: nil, state: "pending",
                    resourceVersion: "\(entries.count + 1)"))
        }
        func add(_ entry: GitHubInbox.Entry) { entries.append(entry) }
        func clear() {
            calls = []
            saves = 0
            dieAfter = nil
        }
        func put(_ t: GitHubLoopThread) {
            if !stored.isEmpty { stored[0].thread = t }
        }
        func states() -> [String] { entries.map { "\($0.event.delivery)=\($0.state)" } }
        func thread() -> GitHubLoopThread? { stored.first?.thread }
        /// Each task queued (the world's task list), by id: its issue.
        func tasks() -> [Int: String] { Dictionary(work.tasks.map { ($0.id, $0.issue) }) { a, _ in a } }

        /// Logs a call, or throws when the loop died before it.
        func call(_ line: String) throws {
            if let d = dieAfter, calls.count >= d { throw Died() }
            calls.append(line)
        }
        func fail(_ what: String) throws {
            if failing.contains(what) { throw SoError("cannot \(what) \(GitHubLoopExecutorTests.ws)", hint: "fix it") }
            // The record's gate (`RecordGate`): the refusal names a teammate's text and this machine's paths.
            if failing.contains(what + " refused") {
                throw SoError(
                    "revision 9 of \(GitHubLoopExecutorTests.ws) (start by mallory@laptop-b, as it says) is refused: "
                        + "compose/x.yml configs.k.file reads /home/loop/.ssh/id_ed25519; nothing was written to "
                        + "/home/loop/.so/deployments/\(GitHubLoopExecutorTests.ws)", hint: "roll back",
                    exitCode: RecordGate.refused)
            }
        }
        func entries(state: String) throws -> [GitHubInbox.Entry] {
            if let d = dieAfter, calls.count >= d { throw Died() }
            return entries.filter { $0.state == state }
        }
        func threads() throws -> [GitHubLoopStore.Stored] {
            if let d = dieAfter, calls.count >= d { throw Died() }
            return stored
        }
        func mark(_ entry: GitHubInbox.Entry, state: String) throws -> GitHubInbox.Entry? {
            try call("mark \(entry.event.delivery) \(state)")
            guard !stolen.contains(entry.event.delivery),
                let i = entries.firstIndex(where: { $0.secretName == entry.secretName }),
                entries[i].resourceVersion == entry.resourceVersion
            else { return nil }
            version += 1
            entries[i].state = state
            entries[i].resourceVersion = "\(version)"
            entries[i].markedAt = now
            entries[i].takenBy = state == "taken" ? identity : nil
            return entries[i]
        }
        func save(_ t: GitHubLoopThread, over: GitHubLoopStore.Stored?) throws -> GitHubLoopStore.Stored? {
            if failing.contains("save") { return nil }
            let step = t.step.map { $0.kind + ($0.phase.map { ":\($0)" } ?? "") } ?? "-"
            try call(
                "save \(t.workspace) running=\(t.running) tasks=\(t.tasks) removed=\(t.removed) "
                    + "comment=\(t.lastComment) pr=\(t.pullRequest.map(String.init) ?? "-") step=\(step) "
                    + "last=\(t.last?.state ?? "-")" + (t.lastReviewComment.map { " reviewComment=\($0)" } ?? "")
                    + (t.taskIDs.map { " ids=\($0)" } ?? "") + (t.reported.map { " reported=\($0)" } ?? "")
                    + (t.replies.map {
                        " replies=" + $0.map { "\($0.task):#\($0.pullRequest):\($0.comments)" }.joined()
                    }
                        ?? ""))
            saves += 1
            let i = stored.firstIndex { $0.thread.workspace == t.workspace }
            version += 1
            if raced.contains(saves), let i {
                stored[i].resourceVersion = "t\(version)"
                return nil
            }
            guard i.map({ stored[$0].resourceVersion }) == over?.resourceVersion else { return nil }
            let s = GitHubLoopStore.Stored(thread: t, resourceVersion: "t\(version)")
            if let i { stored[i] = s } else { stored.append(s) }
            return s
        }
        func up(workspace: String, repository: String, carried: Bool) throws {
            try call("up \(workspace) \(repository)" + (carried ? " carried" : ""))
            try fail("up")
            existing = true
        }
        func task(workspace: String, text: String, title: String?, pullRequest: Bool, issue: GitHubIssue) throws
            -> Int
        {
            try call("task \(workspace) \(issue) title=\(title ?? "-") pr=\(pullRequest ? "yes" : "no") text=\(text)")
            try fail("task")
            nextTask += 1
            work.tasks.append(
                GitHubLoopWork.Task(id: nextTask - 1, state: "queued", issue: issue.description.lowercased()))
            work.running = true
            return nextTask - 1
        }
        func down(workspace: String, repository: String) throws -> String? {
            try call("down \(workspace)")
            try fail("down")
            existing = false
            return kept
        }
        func work(workspace: String, repository: String) throws -> GitHubLoopWork {
            try call("work \(workspace)")
            return work
        }
        func logTail(workspace: String, task: Int) throws -> String {
            try call("logTail \(workspace) \(task)")
            try fail("logTail")
            return log
        }
        func reply(_ pull: GitHubIssue, comment: Int, _ body: String) throws {
            try call("reply \(pull) comment \(comment): \(body)")
            try fail("reply")
        }
        func exists(workspace: String) throws -> Bool {
            try call("exists \(workspace)")
            return existing
        }
        func delete(_ entry: GitHubInbox.Entry) throws -> Bool {
            try call("delete \(entry.event.delivery)")
            entries.removeAll { $0.secretName == entry.secretName }
            return true
        }
        /// The taken digests (`takenDigests`, read unlogged; the reads counted).
        var digests = GitHubTakenDigests()
        var digestReads = 0
        func takenDigests() throws -> GitHubTakenDigests {
            digestReads += 1
            try fail("digests")
            return digests
        }
        func remember(_ kept: [(digest: String, at: Date)]) throws {
            guard !kept.isEmpty else { return }
            try call(
                "remember "
                    + kept.map { "\($0.digest.prefix(8))@\(Int($0.at.timeIntervalSince1970))" }.joined(separator: ","))
            try fail("remember")
            digests.add(kept)
        }
        func set(digests: GitHubTakenDigests) { self.digests = digests }
        func comment(_ issue: GitHubIssue, _ body: String) throws {
            try call("comment \(issue): \(body)")
            try fail("comment")
        }
        func react(_ issue: GitHubIssue, comment: Int?) throws {
            try call("react \(issue) \(comment.map { "comment \($0)" } ?? "issue")")
        }
        func reactOnCode(_ pull: GitHubIssue, comment: Int) throws {
            try call("react \(pull) review comment \(comment)")
        }
        /// What GitHub says of each login (write when not named; a login in `failing` is not answered), and who was
        /// asked, in order (a read: not in `calls`, so the logs above state the world's changes).
        var permissions: [String: GitHubPermission] = [:]
        var asked: [String] = []
        func set(permissions: [String: GitHubPermission]) { self.permissions = permissions }
        func permission(repository: String, login: String) throws -> GitHubPermission {
            if let d = dieAfter, calls.count >= d { throw Died() }
            asked.append("\(repository) \(login)")
            try fail("permission of \(login)")
            return permissions[login] ?? .write
        }
    }

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String] = []
        func say(_ line: String) { lock.withLock { kept.append(line) } }
        var all: [String] { lock.withLock { kept } }
    }

    static func event(
        _ id: String, _ event: String, _ action: String, pr: Bool = false, number: Int = 12,
        who: String = "MEMBER", _ edit: (inout GitHubEvent) -> Void = { _ in }
    ) -> GitHubEvent {
        var e = GitHubEvent(
            delivery: id, event: event, action: action, repository: repo, number: number, isPullRequest: pr,
            authorAssociation: who, sender: "octocat", truncated: false)
        e.title = "Fix the login"
        e.body = hostile
        edit(&e)
        return e
    }
    static func labeled(_ id: String) -> GitHubEvent { event(id, "issues", "labeled") { $0.label = "so" } }
    static func comment(_ id: String, _ cid: Int, _ text: String, who: String = "MEMBER") -> GitHubEvent {
        event(id, "issue_comment", "created", who: who) {
            $0.commentID = cid
            $0.commentBody = "/so \(text)"
        }
    }
    static func thread(running: Bool) -> GitHubLoopThread {
        var t = GitHubLoopThread(repository: repo, issue: 12, workspace: ws)
        t.running = running
        t.tasks = 1
        t.startedAt = now
        t.pullRequest = 7
        t.branch = "agent/\(ws)"
        t.privateRepository = true  // a failed task's log tail is posted (GitHubLoopTrustTests: a public one's is not)
        return t
    }

    static func pass(_ fake: Fake, at: Date = now) async throws -> [String] {
        let lines = Lines()
        await fake.set(now: at)
        try await GitHubLoopExecutor(effects: fake, config: config, say: lines.say).pass(now: at)
        return lines.all
    }

    @Test func aLabelStartsTheWorkspaceQueuesItsTaskReactsAndComments() async throws {
        let fake = Fake([Self.labeled("d1")])
        let lines = try await Self.pass(fake)
        #expect(lines == ["github: acme/web#12: start \(Self.ws) (delivery d1)"])
        #expect(
            await fake.calls == [
                "mark d1 taken",
                "save \(Self.ws) running=false tasks=0 removed=false comment=0 pr=- step=start:up last=-",
                "up \(Self.ws) acme/web",
                "save \(Self.ws) running=false tasks=0 removed=false comment=0 pr=- step=start:task last=-",
                "task \(Self.ws) acme/web#12 title=Fix the login pr=yes text=Fix the login\n\n\(Self.hostile)",
                "react acme/web#12 issue",
                "comment acme/web#12: so made the workspace `\(Self.ws)` for this issue; its task 3 runs there. "
                    + "See it: `so deployment --name \(Self.ws) status`",
                "save \(Self.ws) running=true tasks=1 removed=false comment=0 pr=- step=- last=done ids=[3]",
                "mark d1 done",
            ])
        #expect(await fake.states() == ["d1=done"])
    }

    @Test func commentsWhileATaskRunsWaitThenBecomeOneTask() async throws {
        let fake = Fake(
            [Self.comment("d2", 21, "add a test"), Self.comment("d3", 22, "and docs")],
            threads: [Self.thread(running: true)])
        await fake.set(work: GitHubLoopWork(running: true))
        let waiting = try await Self.pass(fake)
        #expect(
            waiting == [
                "github: acme/web#12: wait: a task of \(Self.ws) is under way (delivery d2)",
                "github: acme/web#12: wait: a task of \(Self.ws) is under way (delivery d3)",
            ])
        #expect(await fake.calls == ["work \(Self.ws)"])
        #expect(await fake.states() == ["d2=pending", "d3=pending"])

        await fake.clear()
        await fake.set(work: GitHubLoopWork(running: false, pullRequest: 7, branch: "agent/\(Self.ws)", cost: 0.5))
        let lines = try await Self.pass(fake)
        #expect(
            lines == [
                "github: acme/web#12: \(Self.ws) is idle, its task ended",
                "github: acme/web#12: task \(Self.ws) (2 asks) (deliveries d2, d3)",
            ])
        let asked = "Asked by @octocat in a comment:\n\n"
        #expect(
            await fake.calls == [
                "work \(Self.ws)", "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=- last=-",
                "mark d2 taken", "mark d3 taken",
                "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=task last=-",
                "task \(Self.ws) acme/web#12 title=- pr=no text=\(asked)add a test\n\n---\n\n\(asked)and docs",
                "react acme/web#12 comment 21", "react acme/web#12 comment 22",
                "save \(Self.ws) running=true tasks=2 removed=false comment=22 pr=7 step=- last=done ids=[3]",
                "mark d2 done",
                "mark d3 done",
            ])
    }

    @Test func anOutsidersCommandGetsOneReplyAndNothingRuns() async throws {
        let fake = Fake(
            [Self.comment("d4", 30, "delete everything", who: "NONE")], threads: [Self.thread(running: false)])
        let lines = try await Self.pass(fake)
        #expect(lines == ["github: acme/web#12: reply (delivery d4)"])
        let calls = await fake.calls
        #expect(calls.count == 3)
        #expect(calls.first == "mark d4 taken")
        #expect(calls[1].hasPrefix("comment acme/web#12: Nothing ran for @octocat"))
        #expect(calls.last == "mark d4 done")
    }

    @Test func aClosedPullRequestRemovesTheWorkspaceAndSaysWhereTheWorkIs() async throws {
        let closed = Self.event("d5", "pull_request", "closed", pr: true, number: 7) {
            $0.merged = true
            $0.headRef = "agent/\(Self.ws)"
            $0.headRepoFork = false
        }
        let fake = Fake([closed], threads: [Self.thread(running: false)])
        let lines = try await Self.pass(fake)
        #expect(lines == ["github: acme/web#7: remove \(Self.ws) (pull request merged) (delivery d5)"])
        #expect(
            await fake.calls == [
                "mark d5 taken",
                "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=remove last=-",
                "down \(Self.ws)",
                "comment acme/web#12: so removed the workspace `\(Self.ws)` (pull request #7 merged); "
                    + "its work is on the branch `agent/\(Self.ws)`.",
                "save \(Self.ws) running=false tasks=1 removed=true comment=0 pr=7 step=- last=done", "mark d5 done",
            ])
    }

    @Test func aClosedPullRequestsUnpushedWorkIsKeptOnABranchAndTheCommentSaysWhich() async throws {
        let closed = Self.event("d5", "pull_request", "closed", pr: true, number: 7) {
            $0.merged = false
            $0.headRepoFork = false
        }
        let fake = Fake([closed], threads: [Self.thread(running: false)])
        await fake.set(kept: "so/kept/\(Self.ws)-20261128-023035")
        _ = try await Self.pass(fake)
        let said = await fake.calls.filter { $0.hasPrefix("comment ") }
        #expect(
            said == [
                "comment acme/web#12: so removed the workspace `\(Self.ws)` (pull request #7 closed); its work is on "
                    + "the branch `agent/\(Self.ws)`; what it held that was not pushed is on the branch "
                    + "`so/kept/\(Self.ws)-20261128-023035`."
            ])
    }

    @Test func theKeptBranchIsTheWorkspaceAndTheTimeInUTC() {
        let at = Date(timeIntervalSince1970: 1_795_833_035)
        #expect(GitHubLoopLive.keptBranch(Self.ws, at: at) == "so/kept/\(Self.ws)-20261128-023035")
    }

    /// A pull request closed while a task of its thread runs: the close waits, the task (queued on a thread that has
    /// a pull request) asked for none, so its end opens no new one that would stay open; then the workspace goes.
    @Test func aPullRequestClosedWhileItsTaskRunsGetsNoNewPullRequestFromIt() async throws {
        let fake = Fake([Self.comment("d1", 50, "and the docs")], threads: [Self.thread(running: false)])
        _ = try await Self.pass(fake)
        let asked = await fake.calls.filter { $0.hasPrefix("task ") }
        #expect(asked.count == 1)
        #expect(asked.first?.contains(" pr=no ") == true)
        let closed = Self.event("d2", "pull_request", "closed", pr: true, number: 7) {
            $0.merged = false
            $0.headRepoFork = false
        }
        await fake.add(closed)
        await fake.clear()
        _ = try await Self.pass(fake)
        #expect(await fake.calls.contains { $0.hasPrefix("down ") } == false)
        #expect(await fake.states().last == "d2=pending")
        await fake.set(work: GitHubLoopWork(running: false, pullRequest: 7, tasks: [.init(id: 3, state: "succeeded")]))
        await fake.clear()
        _ = try await Self.pass(fake)
        _ = try await Self.pass(fake)
        #expect(await fake.calls.contains("down \(Self.ws)"))
        #expect(await fake.thread()?.pullRequest == 7)
        #expect(await fake.states().last == "d2=done")
    }

    /// Only a thread with no pull request yet asks its next task for one (its first task opened none: it failed,
    /// or pushed nothing).
    @Test func aTaskOnAThreadWithNoPullRequestYetAsksForOne() async throws {
        var t = Self.thread(running: false)
        t.pullRequest = nil
        let fake = Fake([Self.comment("d1", 50, "try again")], threads: [t])
        _ = try await Self.pass(fake)
        #expect(await fake.calls.filter { $0.hasPrefix("task ") }.map { $0.contains(" pr=yes ") } == [true])
    }

    @Test func aStepAnotherLoopTookIsSkippedAndWhatItTookPutBack() async throws {
        let fake = Fake(
            [Self.comment("d6", 40, "one"), Self.comment("d7", 41, "two")], threads: [Self.thread(running: false)])
        await fake.set(stolen: ["d7"])
        let lines = try await Self.pass(fake)
        #expect(lines == ["github: acme/web#12: skipped, taken by another loop (deliveries d6, d7)"])
        #expect(await fake.calls == ["mark d6 taken", "mark d7 taken", "mark d6 pending"])
        #expect(await fake.states() == ["d6=pending", "d7=pending"])
    }

    @Test func anActionThatThrowsMarksItsEntriesFailedAndSavesTheThread() async throws {
        let fake = Fake([Self.labeled("d8")])
        await fake.set(failing: ["up"])
        let lines = try await Self.pass(fake)
        #expect(
            lines == [
                "github: acme/web#12: start \(Self.ws) failed: cannot up \(Self.ws); hint: fix it (delivery d8)"
            ])
        #expect(
            await fake.calls == [
                "mark d8 taken",
                "save \(Self.ws) running=false tasks=0 removed=false comment=0 pr=- step=start:up last=-",
                "up \(Self.ws) acme/web",
                "save \(Self.ws) running=false tasks=0 removed=true comment=0 pr=- step=- last=failed",
                "mark d8 failed",
            ])
        #expect(await fake.states() == ["d8=failed"])
        // A new label starts again, over the thread the failure left.
        await fake.clear()
        await fake.set(failing: [])
        await fake.add(Self.labeled("d9"))
        #expect(try await Self.pass(fake) == ["github: acme/web#12: start \(Self.ws) (delivery d9)"])
        #expect(await fake.thread()?.removed == false)
    }

    @Test func aTaskThatFailsLeavesItsCommentTakenAndNoTaskRunning() async throws {
        let fake = Fake([Self.comment("d10", 50, "go")], threads: [Self.thread(running: false)])
        await fake.set(failing: ["task"])
        let lines = try await Self.pass(fake)
        #expect(lines.count == 1)
        #expect(lines[0].hasPrefix("github: acme/web#12: task \(Self.ws) failed: cannot task"))
        #expect(!lines[0].contains("rm -rf") && !lines[0].contains("ghp_"))
        #expect(
            await fake.calls.suffix(2) == [
                "save \(Self.ws) running=false tasks=1 removed=false comment=50 pr=7 step=- last=failed",
                "mark d10 failed",
            ])
    }

    /// A task on a workspace whose record in the cluster holds a revision the record's gate refuses (a teammate's,
    /// `GitHubLoopRecordTests`): one comment on the issue says nothing ran and why, with none of the refusal's text
    /// (the record's, and the loop's paths); the step fails as any (the comment stays taken, no task runs).
    @Test func aTaskOnARefusedRecordSaysSoOnTheIssue() async throws {
        let fake = Fake([Self.comment("d11", 51, "go")], threads: [Self.thread(running: false)])
        await fake.set(failing: ["task refused"])
        let lines = try await Self.pass(fake)
        #expect(
            lines.count == 1 && lines[0].hasPrefix("github: acme/web#12: task \(Self.ws) failed: revision 9 of"),
            "\(lines)")
        let calls = await fake.calls
        #expect(
            calls.suffix(2) == [
                "save \(Self.ws) running=false tasks=1 removed=false comment=51 pr=7 step=- last=failed",
                "mark d11 failed",
            ], "\(calls)")
        let said = calls.dropLast(2).last ?? ""
        #expect(
            said.hasPrefix(
                "comment acme/web#12: Nothing ran for this: the cluster's record of the workspace `\(Self.ws)`")
                && said.contains("so deployment --name \(Self.ws) diff"), "\(calls)")
        #expect(calls.filter { $0.hasPrefix("comment ") }.count == 1)
        #expect(!calls.contains { $0.contains("mallory") || $0.contains("/home/loop") }, "\(calls)")
        #expect(await fake.tasks().isEmpty)
    }

    static func review(_ id: String, _ rid: Int) -> GitHubEvent {
        event(id, "pull_request_review", "submitted", pr: true, number: 7) {
            $0.reviewID = rid
            $0.reviewState = "changes_requested"
            $0.reviewBody = "Two things."
            $0.headRef = "agent/\(Self.ws)"
            $0.headRepoFork = false
        }
    }
    static func inline(_ id: String, _ cid: Int, review rid: Int, line: Int, reply: Int? = nil, _ body: String)
        -> GitHubEvent
    {
        event(id, "pull_request_review_comment", "created", pr: true, number: 7) {
            $0.commentID = cid
            $0.commentBody = body
            $0.commentPath = "Sources/App.swift"
            $0.commentLine = line
            $0.commentReviewID = rid
            $0.inReplyTo = reply
            $0.headRef = "agent/\(Self.ws)"
            $0.headRepoFork = false
        }
    }
    static let failed = GitHubLoopWork.Task(
        id: 3, state: "failed", exitCode: 1,
        commits: [
            TaskRecord.Commit(sha: "abc1234def5678", subject: "Use a constant"),
            TaskRecord.Commit(sha: "0123456789abcd", subject: "Split the file"),
        ], cost: "1200 in · 300 out · $0.1200")

    @Test func aReviewAndItsInlineCommentsAreOneTaskWhoseEndIsCommentedAndRepliedOnce() async throws {
        var t = Self.thread(running: false)
        t.taskIDs = [2]
        t.reported = [2]
        let fake = Fake(
            [
                Self.inline("c1", 901, review: 5, line: 12, "Use a constant."), Self.review("r1", 5),
                Self.inline("c2", 902, review: 5, line: 40, reply: 901, "Also here."),
            ], threads: [t])
        #expect(
            try await Self.pass(fake) == [
                "github: acme/web#7: task \(Self.ws) (deliveries r1, c1)",
                "github: acme/web#7: ignore: a comment, not a command (delivery c2)",
            ])
        let text =
            "Changes requested by @octocat in a review of the pull request:\n\nTwo things.\n\n"
            + "Comments on the code:\n\nSources/App.swift:12\nUse a constant."
        #expect(
            await fake.calls == [
                "mark r1 taken", "mark c1 taken",
                "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=task last=- ids=[2] "
                    + "reported=[2]",
                "task \(Self.ws) acme/web#12 title=- pr=no text=\(text)", "react acme/web#7 review comment 901",
                "save \(Self.ws) running=true tasks=2 removed=false comment=0 pr=7 step=- last=done reviewComment=901 "
                    + "ids=[2, 3] reported=[2] replies=3:#7:[901]",
                "mark r1 done", "mark c1 done", "mark c2 done",
            ])

        // The task fails; the next pass sees it ended: the thread saved first, then the comment and the reply.
        await fake.clear()
        let token = GeneratedTokens.github()
        let log = (1...25).map { "line \($0)" }.joined(separator: "\n") + "\nexport GITHUB_TOKEN=\(token)\n"
        var old = Self.failed
        old.id = 2
        await fake.set(
            work: GitHubLoopWork(running: false, pullRequest: 7, tasks: [old, Self.failed]), log: log)
        #expect(
            try await Self.pass(fake) == [
                "github: acme/web#12: \(Self.ws) is idle, its task ended",
                "github: acme/web#12: task 3 failed, its outcome commented",
            ])
        let outcome = GitHubLoopReport.outcome(Self.failed, workspace: Self.ws, log: log)
        #expect(!outcome.contains(token))
        #expect(
            await fake.calls == [
                "work \(Self.ws)",
                "save \(Self.ws) running=false tasks=2 removed=false comment=0 pr=7 step=- last=done "
                    + "reviewComment=901 ids=[2, 3] reported=[2, 3]",
                "logTail \(Self.ws) 3", "comment acme/web#12: \(outcome)",
                "reply acme/web#7 comment 901: so's task 3 in `\(Self.ws)` took this comment and failed (exit 1): "
                    + "2 commits (`abc1234`, `0123456`); its outcome is on the issue.",
            ])
        #expect(outcome.contains("line 25\nexport GITHUB_TOKEN=<secret>\n```") && !outcome.contains("ghp_"))

        // Another pass, or a loop restarted: the thread says it was told; nothing is posted again.
        await fake.clear()
        #expect(try await Self.pass(fake) == [])
        #expect(await fake.calls == [])
    }

    @Test func anOutcomeIsPostedOnlyByTheLoopThatSavedItsThread() async throws {
        var t = Self.thread(running: true)
        t.taskIDs = [3]
        let fake = Fake([], threads: [t])
        var ok = Self.failed
        ok.state = "succeeded"
        await fake.set(failing: ["save"], work: GitHubLoopWork(running: false, tasks: [ok]))
        #expect(try await Self.pass(fake) == [])
        #expect(await fake.calls == ["work \(Self.ws)"], "another loop saved the thread first: it posts, not this one")
        // Saved: a success has no log read; a comment GitHub refuses is said once and not tried again.
        await fake.clear()
        await fake.set(failing: ["comment"])
        #expect(
            try await Self.pass(fake) == [
                "github: acme/web#12: \(Self.ws) is idle, its task ended",
                "github: acme/web#12: task 3's outcome was not commented: cannot comment \(Self.ws); hint: fix it",
            ])
        #expect(
            await fake.calls == [
                "work \(Self.ws)",
                "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=- last=- ids=[3] reported=[3]",
                "comment acme/web#12: \(GitHubLoopReport.outcome(ok, workspace: Self.ws, log: ""))",
            ])
        await fake.clear()
        #expect(try await Self.pass(fake) == [])
        #expect(await fake.calls == [])
        // The next task fails and its log cannot be read: its outcome goes without it; task 3's is not said again.
        var next = try #require(await fake.thread())
        next.running = true
        next.taskIDs = [3, 4]
        await fake.put(next)
        var failed = Self.failed
        failed.id = 4
        await fake.set(failing: ["logTail"], work: GitHubLoopWork(running: false, tasks: [ok, failed]))
        #expect(
            try await Self.pass(fake) == [
                "github: acme/web#12: \(Self.ws) is idle, its task ended",
                "github: acme/web#12: task 4's log cannot be read, its outcome goes without: cannot logTail "
                    + "\(Self.ws); hint: fix it",
                "github: acme/web#12: task 4 failed, its outcome commented",
            ])
        #expect(
            await fake.calls == [
                "work \(Self.ws)",
                "save \(Self.ws) running=false tasks=1 removed=false comment=0 pr=7 step=- last=- ids=[3, 4] "
                    + "reported=[3, 4]",
                "logTail \(Self.ws) 4",
                "comment acme/web#12: \(GitHubLoopReport.outcome(failed, workspace: Self.ws, log: ""))",
            ])
    }

    @Test func theReplyGoesInTheCommentsThreadAndARefusalNamesIt() async throws {
        var ctx = try Harness().ctx
        let web = FakeWeb()
        web.answers = [
            WebResponse(status: 201, body: Data()),
            WebResponse(status: 404, body: Data(#"{"message": "Not Found"}"#.utf8)),
        ]
        ctx.web = web
        ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        ctx.environment["GITHUB_API_URL"] = "http://127.0.0.1:9"
        let api = GitHubAPI(ctx: ctx)
        let pull = try #require(GitHubIssue("acme/web#7"))
        try await api.reply(pull, comment: 901, "Done: `abc1234`.")
        do {
            try await api.reply(pull, comment: 902, "x")
            Issue.record("a 404 was taken for a reply")
        } catch let e as SoError {
            #expect(e.message == "GitHub refused the reply to review comment 902 of acme/web#7: Not Found")
            #expect(e.hint == "the token needs pull-requests: write on acme/web")
        }
        #expect(
            web.requests.map { "\($0.method) \($0.url)" } == [
                "POST http://127.0.0.1:9/repos/acme/web/pulls/7/comments/901/replies",
                "POST http://127.0.0.1:9/repos/acme/web/pulls/7/comments/902/replies",
            ])
        #expect(String(decoding: web.requests.first?.body ?? Data(), as: UTF8.self) == #"{"body":"Done: `abc1234`."}"#)
        #expect(web.requests.allSatisfy { $0.headers.contains { $0.0 == "Authorization" } })
    }

    @Test func oneLineErrorsAreCutAndHaveNoNewline() {
        let e = SoError("first\nsecond" + String(repeating: "x", count: 400), hint: "h")
        let line = GitHubLoopExecutor.oneLine(e)
        #expect(!line.contains("\n") && line.count == 300 && line.hasPrefix("first second"))
    }

    @Test func theLiveSettingsCloneTheIssuesRepositoryUnlessTheConfigNamesOne() {
        var c = Self.config
        c.config = ["GIT_REF=main"]
        #expect(
            GitHubLoopLive.settings(c, repository: "acme/web") == [
                "GIT_REF=main", "GIT_REPO=https://github.com/acme/web",
            ])
        c.config = ["GIT_REPO=git@example.invalid:acme/web.git"]
        #expect(GitHubLoopLive.settings(c, repository: "acme/web") == c.config)
        #expect(GitHubLoopLive.pullNumber("https://github.com/acme/web/pull/7") == 7)
        #expect(GitHubLoopLive.pullNumber("https://github.com/acme/web/issues/7") == nil)
    }

    @Test func theReactionIsEyesOnTheCommentOrTheIssueAndARefusalNamesIt() async throws {
        var ctx = try Harness().ctx
        let web = FakeWeb()
        web.answers = [
            WebResponse(status: 201, body: Data()), WebResponse(status: 200, body: Data()),
            WebResponse(status: 201, body: Data()),
        ]
        web.answers.append(WebResponse(status: 403, body: Data(#"{"message": "Resource not accessible"}"#.utf8)))
        ctx.web = web
        ctx.environment["GITHUB_TOKEN"] = "test-github-token-not-real"
        ctx.environment["GITHUB_API_URL"] = "http://127.0.0.1:9/"
        let api = GitHubAPI(ctx: ctx)
        let issue = try #require(GitHubIssue("acme/web#12"))
        try await api.react(issue, comment: 21)
        try await api.react(issue, comment: nil)
        try await api.react(try #require(GitHubIssue("acme/web#7")), comment: 31, onCode: true)
        do {
            try await api.react(issue, comment: 22)
            Issue.record("a 403 was taken for a reaction")
        } catch let e as SoError {
            #expect(e.message == "GitHub refused the reaction on comment 22 of acme/web#12: Resource not accessible")
        }
        #expect(
            web.requests.map(\.url) == [
                "http://127.0.0.1:9/repos/acme/web/issues/comments/21/reactions",
                "http://127.0.0.1:9/repos/acme/web/issues/12/reactions",
                "http://127.0.0.1:9/repos/acme/web/pulls/comments/31/reactions",
                "http://127.0.0.1:9/repos/acme/web/issues/comments/22/reactions",
            ])
        #expect(
            web.requests.allSatisfy { String(decoding: $0.body ?? Data(), as: UTF8.self) == #"{"content":"eyes"}"# })
    }
}
