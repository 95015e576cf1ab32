import Foundation
import SoBasics
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// A loop that dies at every line of a step, then another loop's pass past the lease: each test states every call
/// of that pass, and that the task (or the down) happened exactly once over both loops, the entries marked once.
@Suite struct GitHubLoopReconcileTests {
    typealias T = GitHubLoopExecutorTests
    static let ws = T.ws
    static let later = T.now.addingTimeInterval(1800)

    /// Loop A's pass dying after its `k`-th call (0: before any), then loop B's pass past the lease: B's calls.
    static func dieThenReconcile(_ fake: T.Fake, after k: Int) async throws -> (a: [String], b: [String]) {
        await fake.set(dieAfter: k)
        // A dies: its pass ends on the first call past k (the error is the death, not the pass's)
        _ = try? await T.pass(fake)
        let a = await fake.calls
        await fake.clear()
        fake.who.name = "loop-b"
        _ = try await T.pass(fake, at: later)
        return (a, await fake.calls)
    }

    static let text = "Fix the login\n\n\(T.hostile)"
    static func save(
        _ running: Bool, _ tasks: Int, removed: Bool = false, comment: Int = 0, pr: String = "-",
        step: String = "-", last: String = "-", ids: [Int]? = nil
    ) -> String {
        "save \(ws) running=\(running) tasks=\(tasks) removed=\(removed) comment=\(comment) pr=\(pr) step=\(step) "
            + "last=\(last)" + (ids.map { " ids=\($0)" } ?? "")
    }
    static let start = [
        "mark d1 taken", save(false, 0, step: "start:up"), "up \(ws) acme/web", save(false, 0, step: "start:task"),
        "task \(ws) acme/web#12 title=Fix the login pr=yes text=\(text)", "react acme/web#12 issue",
        "comment acme/web#12: so made the workspace `\(ws)` for this issue; its task 3 runs there. "
            + "See it: `so deployment --name \(ws) status`",
        save(true, 1, last: "done", ids: [3]), "mark d1 done",
    ]

    /// B's calls after A died after its k-th call of a start (the index).
    static let afterStart: [[String]] = [
        start,
        ["mark d1 pending"] + start,
        [save(false, 0, removed: true), "mark d1 pending"] + start,
        [save(false, 0, removed: true), "mark d1 pending"] + start,
        ["work \(ws)", save(false, 0, removed: true), "mark d1 pending"] + start,
        ["work \(ws)", save(true, 1, last: "done", ids: [3]), "mark d1 done", "work \(ws)"],
        ["work \(ws)", save(true, 1, last: "done", ids: [3]), "mark d1 done", "work \(ws)"],
        ["work \(ws)", save(true, 1, last: "done", ids: [3]), "mark d1 done", "work \(ws)"],
        ["mark d1 done", "work \(ws)"],
        ["work \(ws)"],
    ]

    @Test(arguments: 0...9) func aStartDyingAfterEachCallRunsItsTaskOnce(k: Int) async throws {
        let fake = T.Fake([T.labeled("d1")])
        let (a, b) = try await Self.dieThenReconcile(fake, after: k)
        #expect(a == Array(Self.start.prefix(k)))
        #expect(b == Self.afterStart[k])
        #expect((a + b).filter { $0.hasPrefix("task ") }.count == 1)
        #expect(await fake.tasks() == [3: "acme/web#12"])
        #expect(await fake.states() == ["d1=done"])
        let t = try #require(await fake.thread())
        #expect(t.running && t.tasks == 1 && !t.removed && t.step == nil && t.lastTask == 3)
    }

    static let asked = "Asked by @octocat in a comment:\n\ngo"
    static let task = [
        "mark d2 taken", save(false, 1, pr: "7", step: "task"), "task \(ws) acme/web#12 title=- pr=no text=\(asked)",
        "react acme/web#12 comment 21", save(true, 2, comment: 21, pr: "7", last: "done", ids: [3]), "mark d2 done",
    ]
    static let afterTask: [[String]] = [
        task,
        ["mark d2 pending"] + task,
        ["work \(ws)", save(false, 1, pr: "7"), "mark d2 pending"] + task,
        ["work \(ws)", save(true, 2, comment: 21, pr: "7", last: "done", ids: [3]), "mark d2 done", "work \(ws)"],
        ["work \(ws)", save(true, 2, comment: 21, pr: "7", last: "done", ids: [3]), "mark d2 done", "work \(ws)"],
        ["mark d2 done", "work \(ws)"],
        ["work \(ws)"],
    ]

    @Test(arguments: 0...6) func aTaskDyingAfterEachCallRunsOnce(k: Int) async throws {
        let fake = T.Fake([T.comment("d2", 21, "go")], threads: [T.thread(running: false)])
        // the workspace's first task, the label's: not this step's (its id is not above the thread's)
        let first = GitHubLoopWork.Task(id: 1, state: "succeeded", issue: "acme/web#12")
        await fake.set(work: GitHubLoopWork(running: false, tasks: [first]))
        let (a, b) = try await Self.dieThenReconcile(fake, after: k)
        #expect(a == Array(Self.task.prefix(k)))
        #expect(b == Self.afterTask[k])
        #expect((a + b).filter { $0.hasPrefix("task ") }.count == 1)
        #expect(await fake.tasks() == [1: "acme/web#12", 3: "acme/web#12"])
        #expect(await fake.states() == ["d2=done"])
        let t = try #require(await fake.thread())
        #expect(t.running && t.tasks == 2 && t.lastComment == 21 && t.step == nil && t.lastTask == 3)
    }

    @Test func aTaskWhoseLoopDiedBeforeSavingItsIDIsReportedOnceWhenItEnds() async throws {
        let fake = T.Fake([T.comment("d2", 21, "go")], threads: [T.thread(running: false)])
        // A dies after queuing the task (3 calls: the mark, the step's save, the task), before its thread has its id.
        await fake.set(dieAfter: 3)
        _ = try? await T.pass(fake)
        #expect(await fake.calls == Array(Self.task.prefix(3)))
        await fake.clear()
        // The task ended before B's pass: B settles the step (the id saved), then reports its end, once.
        let done = GitHubLoopWork.Task(id: 3, state: "succeeded", issue: "acme/web#12")
        await fake.set(work: GitHubLoopWork(running: false, pullRequest: 7, tasks: [done]))
        fake.who.name = "loop-b"
        let outcome = GitHubLoopReport.outcome(done, workspace: Self.ws, log: "")
        let reported = Self.save(false, 2, comment: 21, pr: "7", last: "done", ids: [3]) + " reported=[3]"
        let lines = try await T.pass(fake, at: Self.later)
        #expect(
            lines == [
                "github: acme/web#12: reconciled the task of \(Self.ws) left by loop-a: it ran; done (delivery d2)",
                "github: acme/web#12: \(Self.ws) is idle, its task ended",
                "github: acme/web#12: task 3 succeeded, its outcome commented",
            ])
        #expect(
            await fake.calls == [
                "work \(Self.ws)", Self.save(true, 2, comment: 21, pr: "7", last: "done", ids: [3]), "mark d2 done",
                "work \(Self.ws)", reported, "comment acme/web#12: \(outcome)",
            ])
        // Another loop, or B again: the thread says it was told; nothing is posted twice.
        await fake.clear()
        fake.who.name = "loop-c"
        #expect(try await T.pass(fake, at: Self.later.addingTimeInterval(60)).isEmpty)
        #expect(await fake.calls == [])
        #expect(await fake.states() == ["d2=done"])
    }

    @Test func aLoopDyingBetweenSavingAnOutcomeAndPostingItLeavesItUnsaidNotTwice() async throws {
        var t = T.thread(running: true)
        t.taskIDs = [3]
        let fake = T.Fake([], threads: [t])
        let done = GitHubLoopWork.Task(id: 3, state: "succeeded", issue: "acme/web#12")
        await fake.set(work: GitHubLoopWork(running: false, pullRequest: 7, tasks: [done]), dieAfter: 2)
        // A dies after saving `reported`, before its comment (the error is the death)
        _ = try? await T.pass(fake)
        #expect(
            await fake.calls == [
                "work \(Self.ws)",
                Self.save(false, 1, pr: "7", ids: [3]) + " reported=[3]",
            ])
        await fake.clear()
        fake.who.name = "loop-b"
        #expect(try await T.pass(fake, at: Self.later).isEmpty)
        #expect(await fake.calls == [], "the outcome is left unsaid, never posted by two loops")
    }

    static let remove = [
        "mark d5 taken", save(false, 1, pr: "7", step: "remove"), "down \(ws)",
        "comment acme/web#12: so removed the workspace `\(ws)` (pull request #7 closed); "
            + "its work is on the branch `agent/\(ws)`.",
        save(false, 1, removed: true, pr: "7", last: "done"), "mark d5 done",
    ]
    static let afterRemove: [[String]] = [
        remove,
        ["mark d5 pending"] + remove,
        ["exists \(ws)", save(false, 1, pr: "7"), "mark d5 pending"] + remove,
        ["exists \(ws)", save(false, 1, removed: true, pr: "7", last: "done"), "mark d5 done"],
        ["exists \(ws)", save(false, 1, removed: true, pr: "7", last: "done"), "mark d5 done"],
        ["mark d5 done"],
        [],
    ]

    @Test(arguments: 0...6) func aRemoveDyingAfterEachCallRemovesOnce(k: Int) async throws {
        let closed = T.event("d5", "pull_request", "closed", pr: true, number: 7) {
            $0.merged = false
            $0.headRef = "agent/\(T.ws)"
            $0.headRepoFork = false
        }
        let fake = T.Fake([closed], threads: [T.thread(running: false)])
        let (a, b) = try await Self.dieThenReconcile(fake, after: k)
        #expect(a == Array(Self.remove.prefix(k)))
        #expect(b == Self.afterRemove[k])
        #expect((a + b).filter { $0.hasPrefix("down ") }.count == 1)
        #expect(await fake.states() == ["d5=done"])
        let t = try #require(await fake.thread())
        #expect(t.removed && !t.running && t.step == nil)
    }

    @Test func anotherLoopsStepWithinItsLeaseIsLeftAloneAndSettledPastIt() async throws {
        let fake = T.Fake([T.labeled("d1")])
        await fake.set(dieAfter: 2)
        // A dies after saving its step (the error is the death)
        _ = try? await T.pass(fake)
        await fake.clear()
        fake.who.name = "loop-b"
        #expect(try await T.pass(fake, at: T.now.addingTimeInterval(1799)).isEmpty)
        #expect(await fake.calls == [])
        #expect(await fake.states() == ["d1=taken"])
        let lines = try await T.pass(fake, at: Self.later)
        #expect(
            lines == [
                "github: acme/web#12: reconciled the start of \(Self.ws) left by loop-a: it did not run; planned again "
                    + "(delivery d1)",
                "github: acme/web#12: start \(Self.ws) (delivery d1)",
            ])
        #expect(await fake.calls == [Self.save(false, 0, removed: true), "mark d1 pending"] + Self.start)
    }

    @Test func aTakenEntryNoStepHoldsGoesBackToPendingSaidOnce() async throws {
        let fake = T.Fake([T.labeled("d1")])
        await fake.set(dieAfter: 1)
        // A dies after taking the entry (the error is the death)
        _ = try? await T.pass(fake)
        await fake.clear()
        fake.who.name = "loop-b"
        let lines = try await T.pass(fake, at: Self.later)
        #expect(
            lines == [
                "github: acme/web#12: reconciled: no step of it is recorded; marked pending (delivery d1)",
                "github: acme/web#12: start \(Self.ws) (delivery d1)",
            ])
    }

    @Test func aStepWhoseThreadChangedBeforeItActedIsPlannedAgain() async throws {
        let fake = T.Fake([T.comment("d2", 21, "go")], threads: [T.thread(running: false)])
        await fake.set(raced: [1])
        let lines = try await T.pass(fake)
        #expect(
            lines == [
                "github: acme/web#12: task \(Self.ws): its thread changed meanwhile; planned again next pass (delivery d2)"
            ])
        #expect(await fake.calls == ["mark d2 taken", Self.save(false, 1, pr: "7", step: "task"), "mark d2 pending"])
        #expect(await fake.states() == ["d2=pending"])
        await fake.clear()
        await fake.set(raced: [])
        #expect(try await T.pass(fake) == ["github: acme/web#12: task \(Self.ws) (delivery d2)"])
        #expect(await fake.calls == Self.task)
    }

    @Test func aStepWhoseThreadChangedAfterItActedIsReconciledByTheNextPassOfTheSameLoop() async throws {
        let fake = T.Fake([T.comment("d2", 21, "go")], threads: [T.thread(running: false)])
        await fake.set(raced: [2])
        let lines = try await T.pass(fake)
        #expect(
            lines == [
                "github: acme/web#12: task \(Self.ws): its thread could not be saved; reconciled next pass (delivery d2)"
            ])
        #expect(await fake.calls == Array(Self.task.prefix(5)))
        #expect(await fake.states() == ["d2=taken"])
        await fake.clear()
        // The same loop, at once: none of its steps is under way between passes, so no lease is waited for.
        let next = try await T.pass(fake)
        #expect(
            next == [
                "github: acme/web#12: reconciled the task of \(Self.ws) left by loop-a: it ran; done (delivery d2)"
            ])
        #expect(
            await fake.calls == [
                "work \(Self.ws)", Self.save(true, 2, comment: 21, pr: "7", last: "done", ids: [3]), "mark d2 done",
                "work \(Self.ws)",
            ])
        #expect(await fake.tasks() == [3: "acme/web#12"])
    }

    static func ended(_ id: String, _ state: String, daysAgo: Double, by: String? = nil) -> GitHubInbox.Entry {
        let e = T.labeled(id)
        return GitHubInbox.Entry(
            secretName: GitHubInbox.secretName(id), event: e, receivedAt: T.now.addingTimeInterval(-40 * 86_400),
            state: state, resourceVersion: "r-\(id)", markedAt: T.now.addingTimeInterval(-daysAgo * 86_400),
            takenBy: by)
    }

    @Test func entriesEndedOverKeepDaysAgoArePrunedOldestFirst() async throws {
        let fake = T.Fake([])
        await fake.add(Self.ended("young", "done", daysAgo: 13))
        await fake.add(Self.ended("failed", "failed", daysAgo: 15))
        await fake.add(Self.ended("old", "done", daysAgo: 20))
        // another loop's step under way, within its lease: neither pruned nor reconciled
        await fake.add(Self.ended("waiting", "taken", daysAgo: 0.01, by: "loop-a"))
        fake.who.name = "loop-b"
        let lines = try await T.pass(fake)
        #expect(lines == ["github: pruned 2 of 2 deliveries ended over 14 days ago"])
        #expect(await fake.calls == ["delete old", "delete failed"])
        #expect(await fake.states() == ["young=done", "waiting=taken"])
    }

    /// Two loops of different repositories on one cluster's `so-github`: a pass of the other's config leaves every
    /// entry and thread of this one as it found it (pending, taken past the lease, old, a thread whose task ended),
    /// and takes its own.
    @Test func aLoopOfOtherRepositoriesLeavesThisOnesEntriesAndThreadsAlone() async throws {
        let fake = T.Fake([T.comment("d1", 60, "go on")], threads: [T.thread(running: true)])
        await fake.add(Self.ended("old", "done", daysAgo: 20))
        await fake.add(Self.ended("stuck", "taken", daysAgo: 1, by: "loop-a"))
        await fake.set(work: GitHubLoopWork(running: false, tasks: [.init(id: 3, state: "succeeded")]))
        var mine = T.labeled("o1")
        mine.repository = "other/api"
        await fake.add(mine)
        fake.who.name = "loop-b"
        let lines = T.Lines()
        let other = GitHubLoopConfig(repositories: ["other/api"], label: "so", stack: "agent-workspace")
        try await GitHubLoopExecutor(effects: fake, config: other, say: lines.say).pass(now: T.now)
        let calls = await fake.calls
        #expect(calls.first == "mark o1 taken", "\(calls)")
        #expect(
            !calls.contains { $0.contains("d1") || $0.contains(Self.ws) || $0.contains("old") || $0.contains("stuck") })
        #expect(await fake.states() == ["d1=pending", "old=done", "stuck=taken", "o1=done"])
        #expect(await fake.thread()?.running == true)
        #expect(lines.all.allSatisfy { $0.contains("other/api") }, "\(lines.all)")
    }

    @Test func aPassPrunesAtMostItsLimit() async throws {
        let fake = T.Fake([])
        for i in 0..<(GitHubLoopExecutor.pruneLimit + 3) {
            await fake.add(Self.ended("e\(i)", "done", daysAgo: 100 - Double(i) / 10))
        }
        let lines = try await T.pass(fake)
        #expect(lines == ["github: pruned 100 of 103 deliveries ended over 14 days ago"])
        #expect(await fake.calls == (0..<100).map { "delete e\($0)" })
        #expect(await fake.states() == ["e100=done", "e101=done", "e102=done"])
    }

    @Test func aLoopPrunesOnItsFirstPassThenAtMostOnceAnHour() async throws {
        let fake = T.Fake([])
        await fake.add(Self.ended("old", "done", daysAgo: 20))
        let lines = T.Lines()
        let loop = GitHubLoopExecutor(effects: fake, config: T.config, say: lines.say)
        try await loop.pass(now: T.now)
        await fake.add(Self.ended("older", "done", daysAgo: 30))
        try await loop.pass(now: T.now.addingTimeInterval(3599))
        #expect(await fake.calls == ["delete old"])
        try await loop.pass(now: T.now.addingTimeInterval(3600))
        #expect(await fake.calls == ["delete old", "delete older"])
        #expect(
            lines.all == [
                "github: pruned 1 of 1 deliveries ended over 14 days ago",
                "github: pruned 1 of 1 deliveries ended over 14 days ago",
            ])
    }
}
