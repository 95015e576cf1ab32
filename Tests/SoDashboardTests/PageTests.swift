import Foundation
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDeploy
@testable import SoWorkspace

/// The pages, drawn from a snapshot of the fake cluster: goldens, and what no page may ever hold.
@Suite struct PageTests {
    @Test func escapingLeavesNoMarkupAndNoTerminalEscapes() {
        #expect(
            HTML.escape(#"<script>alert("x")</script> & 'y'"#)
                == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;")
        #expect(HTML.escape("a\u{1B}[31mb\u{7}c\td\ne") == "a\u{FFFD}[31mb\u{FFFD}c\td\ne")
        // Text that reads other than it is (a bidirectional override, an isolate, a zero-width space, a byte-order
        // mark) is shown as the terminal shows it; a zero-width joiner (emoji) is kept.
        #expect(
            HTML.escape("rm \u{202E}fdp.exe\u{2066}x\u{200B}y\u{FEFF}")
                == #"rm \u{202e}fdp.exe\u{2066}x\u{200b}y\u{feff}"#)
        #expect(HTML.escape("👩\u{200D}💻") == "👩\u{200D}💻")
        #expect(HTML.visible("log \u{202E}line") == #"log \u{202e}line"#)
        #expect(HTML.link("javascript:alert(1)") == "javascript:alert(1)")
        #expect(
            HTML.link("https://x.test/a?b=<c>", "pr")
                == #"<a href="https://x.test/a?b=&lt;c&gt;" rel="noreferrer noopener" target="_blank">pr</a>"#)
    }

    @Test func theEverythingPage() async throws {
        let s = try await DashboardFixture.snapshot()
        let html = EverythingPage.page(s, DashboardFixture.page)
        try PageGolden.check("everything.html", html)
        #expect(
            html.contains("&quot;&gt;&lt;img src=x onerror=alert(9)&gt;") && !html.contains("<img"), "the name is text")
        #expect(!html.contains("<script>alert"), "a task's text is never markup")
        #expect(html.contains("write the docs") && html.contains("&lt;script&gt;alert(1)"), "running and queued tasks")
        #expect(!html.contains("pool-agents-1</a>"), "a warm member is counted in its pool, not listed")
    }

    @Test func aWorkspacePage() async throws {
        let s = try await DashboardFixture.snapshot()
        let l = try #require(s.listing("fix-login"))
        let html = DeploymentPage.page(s, l, nil, task: 3, DashboardFixture.page)
        try PageGolden.check("workspace.html", html)
        #expect(!html.contains("<script>alert") && !html.contains("<img"), "hostile text and output stay text")
        #expect(!html.contains("\u{1B}"), "no terminal escape reaches the page")
        #expect(html.contains(#"name="csrf" value="CSRF-TOKEN""#), "every form carries the CSRF token")
        #expect(html.contains(#"href="https://github.com/acme/web/issues/12""#), "the issue links to GitHub")
        #expect(
            html.contains("<td>3 steps</td>") && !html.contains("swift test"),
            "a finished task's row says how many steps it took, not its last one")
    }

    @Test func aDeploymentPageWithAFailingContainer() async throws {
        let s = try await DashboardFixture.snapshot()
        let l = try #require(s.listing("web"))
        var status = DeploymentStatus(
            deployment: l.id, namespace: "web", cluster: "kind:so",
            workloads: [
                .init(kind: "Deployment", name: "laconic-bbb-web", state: "rolling out (0 of 1 updated)", ready: false)
            ],
            ingressHosts: ["web.example.test", "javascript:alert(1)"], pods: [], warnings: [], ready: false)
        status.certificates = [.init(host: "web.example.test", secret: "web-tls", present: false, issuer: nil)]
        status.problems = [
            "pod laconic-bbb-web-1 cannot run: its volume data is on so-node-2, which is unschedulable (cordoned or drained)"
        ]
        var d = DeploymentDetail(status: status)
        d.events = [
            .init(
                time: "2026-11-20T10:00:00Z", type: "Warning", reason: "BackOff", object: "Pod/x", message: "<back-off>"
            )
        ]
        d.config = [.init(kind: "Secret", name: "laconic-bbb-generated-secrets", keys: ["DB_PASSWORD"])]
        d.failing = [("laconic-bbb-web-1/web", "CrashLoopBackOff", "panic: <nil>")]
        let read = PageContext(now: DashboardFixture.now, csrf: "CSRF-TOKEN", actions: false, hostName: "testhost")
        let html = DeploymentPage.page(s, l, d, task: nil, read)
        try PageGolden.check("deployment.html", html)
        #expect(!html.contains(#"action="/actions""#), "a read-only page has no actions")
        #expect(html.contains(#"<a href="https://web.example.test/""#), "a host with a certificate links over https")
        #expect(!html.contains(#"href="javascript"#), "no link runs script")
        #expect(
            html.contains(
                #"<p class="problem" role="alert">pod laconic-bbb-web-1 cannot run: its volume data is on so-node-2"#),
            "a pod held by its volume's node is said in one line")
    }

    @Test func theCostPage() async throws {
        let s = try await DashboardFixture.snapshot()
        let html = CostPage.page(s, DashboardFixture.page)
        try PageGolden.check("cost.html", html)
        #expect(html.contains("<svg") && html.contains("$0.5000") && html.contains("$0.0123"))
    }

    @Test func noPageHoldsASecretValue() async throws {
        let c = try DashboardFixture.cluster()
        try c.seed(
            KubeObject(
                apiVersion: "v1", kind: "Secret", name: "laconic-aaa-generated-secrets", namespace: "fix-login",
                labels: [("app", "laconic-aaa"), ("app.kubernetes.io/managed-by", "so")],
                body: [("data", .map([("API_KEY", .string(Data("sk-very-secret-1234".utf8).base64EncodedString()))]))]))
        let ctx = DashboardFixture.context(c)
        let redactor = try await Redactor.read(c, namespace: "fix-login", ctx: ctx)
        #expect(redactor.apply("the key is sk-very-secret-1234, ok") == "the key is <secret>, ok")
        let feed = DashboardFeed(ctx: ctx, client: c, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        let s = await feed.snapshot
        let l = try #require(s.listing("fix-login"))
        let d = try await feed.detail(l)
        let html = DeploymentPage.page(s, l, d, task: nil, DashboardFixture.page)
        #expect(html.contains("API_KEY") && !html.contains("sk-very-secret-1234"), "keys only")
    }
}

extension PageTests {
    @Test func terminalEscapesAreTakenOut() {
        #expect(HTML.stripTerminal("a\u{1B}[31mred\u{1B}[0m b\u{1B}]0;title\u{07}c") == "ared bc")
        #expect(HTML.stripTerminal("plain <text>") == "plain <text>")
    }
}
