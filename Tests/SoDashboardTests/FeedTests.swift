import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDeploy
@testable import SoWorkspace

/// The one reader behind every page: what it reads, when it says a page must be drawn again, and what it never
/// does (record a use of a workspace, write anything).
@Suite struct FeedTests {
    @Test func oneReadIsThreeListsAndANewVersionOnlyWhenSomethingChanged() async throws {
        let c = try DashboardFixture.cluster()
        let feed = DashboardFeed(ctx: DashboardFixture.context(c), client: c, kubectlFlags: [], clusterName: "kind:so")
        let updates = await feed.updates()
        var seen = updates.makeAsyncIterator()
        #expect(await seen.next() == 0)
        let before = c.calls.count
        await feed.read()
        #expect(c.calls.count - before == 3, "namespaces, the Deployments' table, the pods: \(c.calls.suffix(4))")
        #expect(
            c.calls.allSatisfy { $0.hasPrefix("list ") || $0.hasPrefix("table ") || $0.hasPrefix("get ") }, "\(c.calls)"
        )
        var s = await feed.snapshot
        #expect(
            s.version == 1
                && s.listings.map(\.name).sorted() == ["\"><img src=x onerror=alert(9)>", "fix-login", "pool-agents-1"])
        #expect(s.pods["web"]?.first?.notRunning.first?.reason == "CrashLoopBackOff")
        #expect(await seen.next() == 1)
        await feed.read()
        #expect(await feed.snapshot.version == 1, "nothing changed: no new version")
        c.update("Pod", "laconic-aaa-agent-1", namespace: "fix-login") { pod in
            guard case .object(var o) = pod, case .object(var meta)? = o["metadata"] else { return }
            meta["deletionTimestamp"] = .string("2026-11-26T00:00:00Z")
            o["metadata"] = .object(meta)
            pod = .object(o)
        }
        await feed.read()
        s = await feed.snapshot
        #expect(s.version == 2 && s.pods["fix-login"]?.first?.phase == "Terminating")
        #expect(await seen.next() == 2)
    }

    @Test func aWatchOfEveryNamespaceHearsWhatIsAdded() async throws {
        let c = try DashboardFixture.cluster()
        c.emitsChanges = true
        var events = c.watchAll(.namespace, labelSelector: "app.kubernetes.io/managed-by=so", seconds: 5)
            .makeAsyncIterator()
        try c.seed(DashboardFixture.namespace("new-one", id: "laconic-ddd", dir: "/d/new-one"))
        #expect(try await events.next()?.name == "new-one")
    }

    @Test func aWorkspaceIsReadWithOneExecAndNoUseRecorded() async throws {
        let c = try DashboardFixture.cluster()
        let p = FakeProcessRunner()
        p.fallback = { args in
            guard args.first == "kubectl", args.contains("exec"), args.contains("report") else { return nil }
            #expect(Array(args[0..<7]) == ["kubectl", "-n", "fix-login", "exec", "laconic-aaa-agent-1", "-c", "agent"])
            #expect(!args.joined(separator: " ").contains(HandedCredentials.marker), "a read marks no use")
            return ProcessResult(exitCode: 0, stdout: "@@ 1 state 7\nrunning\n@@ 1 text 5\nhello\n")
        }
        let feed = DashboardFeed(
            ctx: DashboardFixture.context(c, processes: p), client: c, kubectlFlags: [], clusterName: "")
        await feed.read()
        let before = c.calls.count
        await feed.readWorkspaces(busy: false)
        let s = await feed.snapshot
        #expect(s.workspaces["fix-login"]?.tasks.map(\.state) == ["running"], "\(s.workspaces)")
        #expect(s.workspaces["pool-agents-1"] == nil, "a member whose container does not run is not read")
        #expect(
            c.calls.dropFirst(before) == ["list Secret fix-login"],
            "only its Secrets' values, to redact with: no use recorded, nothing woken: \(c.calls.dropFirst(before))")
        #expect(p.calls.count == 1)
    }
}
