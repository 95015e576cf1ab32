import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoGitHub

/// Issue 64, item 5: a signed body taken once is taken once, also after its entry was pruned (`keep-days`): its
/// digest is kept (`GitHubTakenDigests`, bounded), and a body whose own time is long before it was received is a
/// replay too.
@Suite struct GitHubTakenDigestsTests {
    typealias T = GitHubLoopExecutorTests

    static func digest(_ n: Int) -> String { SHA256.hex(Array("body \(n)".utf8)) }

    /// A pending entry as the receiver stores it (named by its body's digest), received `daysAgo` before the pass.
    static func stored(_ e: GitHubEvent, _ n: Int, daysAgo: Double = 0) -> GitHubInbox.Entry {
        GitHubInbox.Entry(
            secretName: GitHubInbox.bodyName(digest(n)), event: e,
            receivedAt: T.now.addingTimeInterval(-daysAgo * 86_400),
            state: "pending", resourceVersion: "p\(n)")
    }

    @Test func aBodyTakenAndPrunedIsRefusedWhenItComesAgain() async throws {
        let fake = T.Fake([])
        var ended = GitHubLoopReconcileTests.ended("d1", "done", daysAgo: 20)
        ended.secretName = GitHubInbox.bodyName(Self.digest(1))
        await fake.add(ended)
        let pruned = try await T.pass(fake)
        #expect(pruned == ["github: pruned 1 of 1 deliveries ended over 14 days ago"])
        let at = Int(T.now.timeIntervalSince1970) - 40 * 86_400
        #expect(await fake.calls == ["remember \(Self.digest(1).prefix(8))@\(at)", "delete d1"])
        #expect(await fake.digests.contains(Self.digest(1)))

        // The same signed body under a new delivery id, a month on: the receiver stores it again (its entry went),
        // and the pass that would take it refuses it: no workspace, no task.
        await fake.clear()
        await fake.add(Self.stored(T.labeled("d2"), 1))
        let lines = try await T.pass(fake, at: T.now.addingTimeInterval(3600))
        #expect(
            lines == [
                "github: acme/web#12: ignore: a replay: its signed body was taken before (its digest is kept) (delivery d2)"
            ])
        #expect(await fake.calls == ["mark d2 done"])
        #expect(await fake.states() == ["d2=done"])
    }

    /// A new body is taken as before, its digest looked up once (a pending entry waiting pass after pass is not
    /// looked up again); when the digests cannot be read, new entries wait rather than go through unchecked.
    @Test func aNewBodyIsLookedUpOnceAndWaitsWhenTheDigestsCannotBeRead() async throws {
        let fake = T.Fake([], threads: [T.thread(running: true)])
        await fake.set(work: GitHubLoopWork(running: true))
        await fake.add(Self.stored(T.comment("d3", 21, "add a test"), 3))
        await fake.set(failing: ["digests"], work: GitHubLoopWork(running: true))
        let loop = GitHubLoopExecutor(effects: fake, config: T.config, say: { _ in })
        let lines = T.Lines()
        let said = GitHubLoopExecutor(effects: fake, config: T.config, say: lines.say)
        try await said.pass(now: T.now)
        #expect(
            lines.all.first?.hasPrefix(
                "github: the taken digests cannot be read, 1 new deliveries wait: cannot digests")
                == true && lines.all.count == 1, "\(lines.all)")
        #expect(await fake.states() == ["d3=pending"])
        await fake.set(failing: [], work: GitHubLoopWork(running: true))
        try await loop.pass(now: T.now)
        try await loop.pass(now: T.now)
        #expect(await fake.digestReads == 2, "read once by the second loop, then not again")
        #expect(await fake.states() == ["d3=pending"], "it waits for the task under way, as before")
    }

    /// A body whose event is from long before it was received (GitHub signs no time; the body's own times are the
    /// only clock a replay carries): refused even when its digest was dropped past the bound.
    @Test func aBodyFromLongBeforeItWasReceivedIsAReplay() async throws {
        var old = T.labeled("d4")
        old.eventTime = Int(T.now.timeIntervalSince1970) - 30 * 86_400
        var fresh = T.labeled("d5")
        fresh.number = 13
        fresh.eventTime = Int(T.now.timeIntervalSince1970) - 6 * 86_400  // a redelivery days on: taken
        let fake = T.Fake([])
        await fake.add(Self.stored(old, 4))
        await fake.add(Self.stored(fresh, 5))
        let lines = try await T.pass(fake)
        #expect(
            lines == [
                "github: acme/web#12: ignore: a replay: its event is from 30 days before it was received (delivery d4)",
                "github: acme/web#13: start \(GitHubLoopThread.workspaceName("acme/web", issue: 13)) (delivery d5)",
            ])
        #expect(await fake.states() == ["d4=done", "d5=done"])
        // A label waiting weeks for a workspace (budget.workspaces) is not old: its entry was received in time.
        var waited = T.labeled("d6")
        waited.eventTime = Int(T.now.timeIntervalSince1970) - 30 * 86_400
        let patient = T.Fake([])
        await patient.add(Self.stored(waited, 6, daysAgo: 30))
        #expect(try await T.pass(patient) == ["github: acme/web#12: start \(T.ws) (delivery d6)"])
    }

    /// When the digests cannot be kept, nothing is pruned (a pruned entry whose digest is not kept could come again).
    @Test func nothingIsPrunedWhenItsDigestsCannotBeKept() async throws {
        let fake = T.Fake([])
        var ended = GitHubLoopReconcileTests.ended("d1", "done", daysAgo: 20)
        ended.secretName = GitHubInbox.bodyName(Self.digest(1))
        await fake.add(ended)
        await fake.set(failing: ["remember"])
        let lines = try await T.pass(fake)
        #expect(
            lines.count == 1
                && lines[0].hasPrefix("github: old deliveries are not pruned: their digests cannot be kept"))
        #expect(await fake.states() == ["d1=done"])
    }

    /// The event's own time, as Foundation reads it (GitHub's own review example: `GitHubEventTests`).
    @Test func theEventsOwnTimeIsReadFromItsBody() throws {
        let f = ISO8601DateFormatter()
        for s in ["1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2026-11-28T21:07:00Z", "2100-03-01T00:00:01Z"] {
            #expect(GitHubEvent.unixTime(s) == f.date(from: s).map { Int($0.timeIntervalSince1970) }, "\(s)")
        }
        for s in ["2026-11-28", "2026-13-01T00:00:00Z", "2026-11-28T21:07:00+01:00", "２026-11-28T21:07:00Z", ""] {
            #expect(GitHubEvent.unixTime(s) == nil, "\(s)")
        }
        // The latest of the body's times; one that is not a time is no refusal (the time is only an extra check).
        let body =
            #"{"action":"created","repository":{"full_name":"a/b"},"sender":{"login":"x"},"#
            + #""issue":{"number":1,"updated_at":"2026-01-01T00:00:00Z"},"#
            + #""comment":{"id":5,"body":"/so","updated_at":"not a time"}}"#
        guard case .event(let c) = GitHubEvent.parse(event: "issue_comment", delivery: "d", body: Data(body.utf8))
        else {
            Issue.record("refused")
            return
        }
        #expect(c.eventTime == GitHubEvent.unixTime("2026-01-01T00:00:00Z"))
    }

    @Test func theDigestsAreBoundedTheOldestDroppedFirst() {
        var kept = GitHubTakenDigests()
        kept.add((0..<5).map { (Self.digest($0), Date(timeIntervalSince1970: Double(100 - $0))) }, bound: 3)
        // Taken at 100, 99, 98, 97, 96: the three latest stay.
        #expect(kept.taken.count == 3 && kept.contains(Self.digest(0)) && !kept.contains(Self.digest(4)))
        #expect(!kept.contains(Self.digest(3)) && kept.contains(Self.digest(2).uppercased()))
        #expect(kept.contains(Self.digest(2)), "the first line")
        #expect(!kept.contains(String(Self.digest(1).prefix(63))) && !kept.contains("98"))
        // kept already: its first time stays
        kept.add([
            ("not a digest", Date(timeIntervalSince1970: 200)), (Self.digest(1), Date(timeIntervalSince1970: 300)),
        ])
        #expect(kept.text == "\(Self.digest(2)) 98\n\(Self.digest(1)) 99\n\(Self.digest(0)) 100\n")
        let read = GitHubTakenDigests(text: kept.text + "junk\n\(Self.digest(9)) x\n", resourceVersion: "7")
        // A digest whose time does not read is kept all the same, as the oldest.
        #expect(read.taken == kept.taken.merging([Self.digest(9): 0]) { a, _ in a } && read.resourceVersion == "7")
        #expect(read.contains(Self.digest(9)) && !read.contains("junk"))
        // A line someone cut short does not hide the next one.
        let cut = GitHubTakenDigests(text: "\(Self.digest(5).prefix(10))\n\(Self.digest(6)) 1\n")
        #expect(cut.contains(Self.digest(6)) && !cut.contains(Self.digest(5)))
        #expect(GitHubTakenDigests.bound * 76 < 1_000_000, "the bound's lines fit in a ConfigMap")
        let entry = Self.stored(T.labeled("d1"), 1)
        #expect(entry.digest == Self.digest(1))
        #expect(GitHubLoopReconcileTests.ended("d1", "done", daysAgo: 1).digest == nil, "named by its delivery")
    }

    /// In the cluster: one ConfigMap, made once, then added to at the resourceVersion read.
    @Test func theDigestsAreKeptInOneConfigMapWrittenConditionally() async throws {
        let cluster = FakeCluster()
        _ = try await cluster.create(KubeObject(.namespace, name: "so-github"), fieldManager: "so")
        let inbox = GitHubInbox(client: cluster)
        #expect(try await inbox.takenDigests() == GitHubTakenDigests())
        try await inbox.remember([(Self.digest(1), Date(timeIntervalSince1970: 10))])
        let first = try await inbox.takenDigests()
        try await inbox.remember([(Self.digest(2), Date(timeIntervalSince1970: 20))])
        let read = try await inbox.takenDigests()
        #expect(read.taken == [Self.digest(1): 10, Self.digest(2): 20])
        #expect(read.resourceVersion != nil && read.resourceVersion != first.resourceVersion)
        let object = try await cluster.get(.configMap, name: GitHubTakenDigests.configMapName, namespace: "so-github")
        #expect(object?.labels["so.dev/github-loop"] == "taken-digests")
        // Not a thread of the loop's store.
        #expect(try await GitHubLoopStore(client: cluster).all().isEmpty)
    }
}
