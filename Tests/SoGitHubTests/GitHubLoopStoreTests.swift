import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// The loop's threads in the cluster: made once, replaced only at the version read, read back whole and in order,
/// a damaged or foreign ConfigMap left out.
@Suite struct GitHubLoopStoreTests {
    static func thread(_ repo: String, _ issue: Int) -> GitHubLoopThread {
        var t = GitHubLoopThread(
            repository: repo, issue: issue, workspace: GitHubLoopThread.workspaceName(repo, issue: issue))
        t.pullRequest = 7
        t.branch = "agent/\(t.workspace)"
        t.running = true
        t.tasks = 2
        t.cost = 0.75
        t.startedAt = Date(timeIntervalSince1970: 1_767_225_600)
        t.lastComment = 100
        return t
    }

    /// A cluster whose inbox holds a delivery, so its namespace is there (the loop reads threads only then).
    static func cluster() throws -> FakeCluster {
        let c = FakeCluster()
        try c.seed(KubeObject(.namespace, name: GitHubInbox.namespace))
        return c
    }

    @Test func threadsAreMadeOnceAndReplacedOnlyAtTheVersionRead() async throws {
        let cluster = try Self.cluster()
        let store = GitHubLoopStore(client: cluster)
        let t = Self.thread("acme/web", 52)
        #expect(try await store.all().isEmpty)
        #expect(try await store.save(t, over: nil))
        #expect(try await !store.save(t, over: nil), "made once")
        let read = try #require(try await store.all().first)
        #expect(read.thread == t, "read back whole")
        var next = read.thread
        next.running = false
        next.tasks = 3
        #expect(try await store.save(next, over: read))
        #expect(try await !store.save(next, over: read), "a second writer at the old version is refused")
        #expect(try await store.all().map(\.thread) == [next])
    }

    @Test func threadsListByIssueAndDamagedOnesAreLeftOut() async throws {
        let cluster = try Self.cluster()
        let store = GitHubLoopStore(client: cluster)
        for (r, n) in [("acme/web", 9), ("Acme/api", 3), ("acme/web", 1)] {
            #expect(try await store.save(Self.thread(r, n), over: nil))
        }
        try cluster.seed(
            KubeObject(
                .configMap, name: "so.github.thread.gh-x-1-000000", namespace: GitHubInbox.namespace,
                labels: [(GitHubLoopStore.label, "thread")], body: [("data", .map([("thread", .string("{not json"))]))])
        )
        // A thread whose name is not its workspace's: not the loop's writing.
        let other = Self.thread("acme/web", 2)
        let text = String(decoding: try GitHubLoopStore.encoder.encode(other), as: UTF8.self)
        try cluster.seed(
            KubeObject(
                .configMap, name: "so.github.thread.gh-elsewhere", namespace: GitHubInbox.namespace,
                labels: [(GitHubLoopStore.label, "thread")], body: [("data", .map([("thread", .string(text))]))]))
        #expect(
            try await store.all().map { "\($0.thread.repository)#\($0.thread.issue)" } == [
                "Acme/api#3", "acme/web#1", "acme/web#9",
            ])
    }
}
