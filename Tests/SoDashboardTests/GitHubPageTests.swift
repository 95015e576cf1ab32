import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDeploy
@testable import SoGitHub
@testable import SoWorkspace

/// The GitHub loop's page, drawn from the fake cluster's threads and inbox: a golden, hostile names as text, what
/// is read (never a Secret's data), and the link from the other pages.
@Suite struct GitHubPageTests {
    static let now = DashboardFixture.now
    static let hostileRepo = "acme/<script>alert(1)</script>"
    static let budget = GitHubLoopConfig.Budget(tasks: 3, wallClock: 8 * 3600, cost: 5, workspaces: 3)

    static func thread(
        _ repo: String, _ issue: Int, _ workspace: String, _ edit: (inout GitHubLoopThread) -> Void = { _ in }
    ) -> GitHubLoopThread {
        var t = GitHubLoopThread(repository: repo, issue: issue, workspace: workspace)
        edit(&t)
        return t
    }

    static func event(_ id: String, number: Int) -> GitHubEvent {
        var e = GitHubEvent(
            delivery: id, event: "issues", action: "labeled", repository: "acme/web", number: number,
            isPullRequest: false, authorAssociation: "OWNER", sender: "octocat", truncated: false)
        e.title = "SECRET TITLE"
        e.body = "SECRET BODY ghp_token"
        return e
    }

    /// The fixture's cluster with four threads (running on the fixture's workspace, idle and spent, removed, one
    /// whose names are hostile and whose workspace is the fixture's hostile deployment) and six deliveries.
    static func cluster() async throws -> FakeCluster {
        let c = try DashboardFixture.cluster()
        let store = GitHubLoopStore(client: c)
        let threads = [
            thread("acme/web", 12, "fix-login") {
                $0.pullRequest = 15
                $0.running = true
                $0.tasks = 2
                $0.cost = 0.75
                $0.startedAt = now.addingTimeInterval(-3 * 3600 - 600)
            },
            thread("acme/web", 7, "gh-web-7-3f2a1c") {
                $0.pullRequest = 9
                $0.tasks = 3
                $0.cost = 5.5
                $0.startedAt = now.addingTimeInterval(-9 * 3600)
            },
            thread("acme/api", 3, "gh-api-3-0b1d2e") {
                $0.removed = true
                $0.tasks = 1
                $0.cost = 0.1
                $0.startedAt = now.addingTimeInterval(-86_400)
            },
            thread(hostileRepo, -1, "\"><img src=x onerror=alert(9)>") {
                $0.pullRequest = 4
                $0.startedAt = Date(timeIntervalSince1970: -1e300)
            },
        ]
        // The first delivery makes the namespace, as on a cluster.
        let inbox = GitHubInbox(client: c)
        for (i, state) in ["pending", "pending", "taken", "done", "done", "failed"].enumerated() {
            let e = event("d-\(i)", number: 12)
            try await inbox.record(e, at: now.addingTimeInterval(Double(i)))
            if state != "pending" {
                let entry = try #require(try await inbox.list().first { $0.event.delivery == e.delivery })
                #expect(try await inbox.mark(entry, state: state))
            }
        }
        for t in threads { #expect(try await store.save(t, over: nil)) }
        return c
    }

    static func snapshot(_ c: FakeCluster) async throws -> DashboardSnapshot {
        let feed = DashboardFeed(
            ctx: DashboardFixture.context(c), client: c, kubectlFlags: [], clusterName: "kind:so", github: true)
        await feed.read()
        await feed.readGitHub()
        for outcome: DeliveryCounts.Outcome in [
            .accepted, .accepted, .accepted, .duplicate, .refused(401), .refused(403), .refused(400), .refused(400),
            .refused(204), .ping, .unstored,
        ] {
            await feed.count(outcome)
        }
        return await feed.snapshot
    }

    static func page(budget: GitHubLoopConfig.Budget?, receiving: [String] = ["acme/web", "acme/api"])
        -> PageContext
    {
        var p = DashboardFixture.page
        p.github = GitHubSetup(receiving: receiving, budget: budget)
        return p
    }

    @Test func theGitHubPage() async throws {
        let c = try await Self.cluster()
        let s = try await Self.snapshot(c)
        let html = GitHubPage.page(s, Self.page(budget: Self.budget))
        try PageGolden.check("github.html", html)
        #expect(html.contains(#"href="https://github.com/acme/web/issues/12""#) && html.contains("/pull/15\""))
        #expect(html.contains(#"<a href="/d/fix-login">fix-login</a>"#), "the workspace links to its page")
        #expect(html.contains("2 / 3") && html.contains("$0.75 / $5.00") && html.contains("4h left of 8h"))
        #expect(html.contains(#"3 / 3 <span class="badge bad">spent</span>"#), "a spent budget says so")
        #expect(html.contains("not on the cluster"), "a thread whose workspace is gone and not removed")
        #expect(html.contains(#"<div class="label">pending</div><div class="value">2</div>"#))
        #expect(html.contains(#"<div class="label">refused 400</div><div class="value">2</div>"#))
        #expect(html.contains(#"<div class="label">accepted</div><div class="value">3</div>"#))
    }

    @Test func hostileNamesAreTextAndNoTextOfAnIssueIsShown() async throws {
        let c = try await Self.cluster()
        let s = try await Self.snapshot(c)
        let html = GitHubPage.page(s, Self.page(budget: Self.budget))
        #expect(!html.contains("<script>alert") && !html.contains("<img"), "names from the cluster are text")
        #expect(html.contains("acme/&lt;script&gt;alert(1)&lt;/script&gt;#-1"), "shown, escaped")
        #expect(!html.contains("github.com/acme/&lt;script"), "and never linked: it is no repository's name")
        #expect(
            html.contains(#"<a href="/d/web">&quot;&gt;&lt;img src=x onerror=alert(9)&gt;</a>"#),
            "a hostile workspace name links only to the page of the deployment that has it")
        for secret in ["SECRET TITLE", "SECRET BODY", "ghp_token", "octocat"] {
            #expect(!html.contains(secret), "no issue's text or sender: \(secret)")
        }
    }

    @Test func theInboxIsCountedFromOneMetadataListNeverItsData() async throws {
        let c = try await Self.cluster()
        let feed = DashboardFeed(
            ctx: DashboardFixture.context(c), client: c, kubectlFlags: [], clusterName: "kind:so", github: true)
        let before = c.calls.count
        await feed.readGitHub()
        #expect(
            Array(c.calls.dropFirst(before)) == [
                "list ConfigMap so-github so.dev/github-loop=thread",
                "labels Secret so-github so.dev/github-inbox=event",
            ])
    }

    @Test func withoutTheLoopsConfigOrAReceiverThePageSaysSo() async throws {
        let c = try await Self.cluster()
        let s = try await Self.snapshot(c)
        let html = GitHubPage.live(s, Self.page(budget: nil, receiving: []))
        #expect(html.contains("what is spent, not what is left") && html.contains("receives no deliveries"))
        #expect(!html.contains(" / ") && !html.contains("left of"), "no budget, nothing left")
        #expect(html.contains("3h since the first task") && html.contains("$0.75"))
        #expect(!html.contains("refused 401"), "no receiver, no counts")
    }

    @Test func aFailedReadIsShownAndKeepsWhatWasRead() async throws {
        let c = try await Self.cluster()
        let feed = DashboardFeed(
            ctx: DashboardFixture.context(c), client: c, kubectlFlags: [], clusterName: "kind:so", github: true)
        await feed.readGitHub()
        let first = await feed.snapshot
        #expect(first.github.threads.count == 4 && first.github.inbox["done"] == 2)
        await feed.readGitHub()
        #expect(await feed.snapshot.version == first.version, "a read that changes nothing is no new version")
        c.failures["labels Secret"] = SoError("cannot list secrets: forbidden", hint: "h")
        await feed.readGitHub()
        let s = await feed.snapshot
        #expect(s.github.threads.count == 4 && s.version == first.version + 1)
        let html = GitHubPage.live(s, Self.page(budget: nil))
        #expect(html.contains("the loop&#39;s state could not be read: error: cannot list secrets: forbidden"))
        await feed.count(.refused(401))
        #expect(await feed.snapshot.version == first.version + 2, "a delivery counted is a new version")
    }

    @Test func theOtherPagesLinkToItOnlyWhenTheLoopIsConfigured() async throws {
        let s = try await DashboardFixture.snapshot()
        #expect(!EverythingPage.page(s, DashboardFixture.page).contains("/github"))
        let html = EverythingPage.page(s, Self.page(budget: nil))
        #expect(html.contains(#"<a href="/github">GitHub loop</a>"#))
        #expect(CostPage.page(s, Self.page(budget: nil)).contains(#"<a href="/github">GitHub loop</a>"#))
        let github = GitHubPage.page(s, Self.page(budget: nil))
        #expect(github.contains(#"<a href="/github" aria-current="page">GitHub loop</a>"#))
        #expect(github.contains(#"data-live="/events?github=1""#))
    }
}
