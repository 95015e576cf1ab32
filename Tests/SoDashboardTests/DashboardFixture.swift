import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDashboard
@testable import SoDeploy
@testable import SoWorkspace

/// A cluster of three `so` deployments (a workspace, a web app whose directory has a hostile name, a warm pool's
/// member) and what the pages are drawn with, at a fixed time.
enum DashboardFixture {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let page = PageContext(now: now, csrf: "CSRF-TOKEN", actions: true, hostName: "testhost")

    static func namespace(
        _ name: String, id: String, dir: String, host: String = "testhost", annotations: [(String, String)] = []
    ) -> KubeObject {
        KubeObject(
            .namespace, name: name,
            labels: [
                ("app", id), ("app.kubernetes.io/instance", id), ("app.kubernetes.io/stack", "agent-workspace"),
                ("app.kubernetes.io/managed-by", "so"),
            ],
            annotations: [("laconic.com/deployment-dir", dir), ("so.dev/host", host)] + annotations)
    }

    static func pod(_ name: String, id: String, namespace: String, container: String, running: Bool) -> KubeObject {
        let state: YValue =
            running
            ? .map([("running", .map([]))]) : .map([("waiting", .map([("reason", .string("CrashLoopBackOff"))]))])
        return KubeObject(
            apiVersion: "v1", kind: "Pod", name: name, namespace: namespace,
            labels: [("app", id), ("app.kubernetes.io/managed-by", "so"), ("app.kubernetes.io/component", container)],
            body: [
                ("spec", .map([("containers", .list([.map([("name", .string(container))])]))])),
                (
                    "status",
                    .map([
                        ("phase", .string("Running")),
                        (
                            "containerStatuses",
                            .list([
                                .map([
                                    ("name", .string(container)), ("ready", .bool(running)),
                                    ("restartCount", .int(running ? 0 : 4)), ("state", state),
                                ])
                            ])
                        ),
                    ])
                ),
            ])
    }

    static func cluster() throws -> FakeCluster {
        let c = FakeCluster()
        try c.seed(
            namespace(
                "fix-login", id: "laconic-aaa", dir: "/home/u/.so/deployments/fix-login",
                annotations: [("so.dev/workspace", "agent /workspace")]))
        try c.seed(
            pod("laconic-aaa-agent-1", id: "laconic-aaa", namespace: "fix-login", container: "agent", running: true))
        try c.seed(namespace("web", id: "laconic-bbb", dir: "/srv/\"><img src=x onerror=alert(9)>"))
        try c.seed(pod("laconic-bbb-web-1", id: "laconic-bbb", namespace: "web", container: "web", running: false))
        try c.seed(
            namespace(
                "pool-agents-1", id: "laconic-ccc", dir: "/home/u/.so/deployments/pool-agents-1",
                annotations: [("so.dev/pool", "agents"), ("so.dev/workspace", "agent /workspace")]))
        return c
    }

    static func context(_ cluster: FakeCluster, processes: FakeProcessRunner = FakeProcessRunner()) -> SoContext {
        var ctx = SoContext(
            fs: MemoryFileSystem(), processes: processes, clock: FixedClock(now), entropy: SeededEntropy(seed: 7),
            console: CapturedConsole(), environment: [:], builtInRoot: nil, connect: { _ in cluster })
        ctx.hostName = "testhost"
        return ctx
    }

    static func task(_ id: Int, _ state: String, _ text: String, usd: Double? = nil, ago: Double = 600) -> TaskRecord {
        var t = TaskRecord(id: id)
        t.state = state
        t.text = text
        t.command = "claude -p \"$TASK\""
        t.queuedAt = now.addingTimeInterval(-ago)
        if state != "queued" { t.startedAt = now.addingTimeInterval(-ago + 5) }
        if ["succeeded", "failed", "cancelled"].contains(state) {
            t.endedAt = now.addingTimeInterval(-ago + 65)
            t.exitCode = state == "succeeded" ? 0 : 1
        }
        if let usd {
            t.cost.reported = true
            t.cost.usd = usd
            t.cost.inputTokens = 1000
            t.cost.outputTokens = 200
        }
        return t
    }

    /// The snapshot the feed reads from `cluster()`, with the workspace's tasks (one hostile) and checkout.
    static func snapshot() async throws -> DashboardSnapshot {
        let c = try cluster()
        let feed = DashboardFeed(ctx: context(c), client: c, kubectlFlags: [], clusterName: "kind:so")
        await feed.read()
        var s = await feed.snapshot
        var w = WorkspaceView()
        w.tasks = [
            task(1, "succeeded", "fix the login form\nand add a test", usd: 0.0123, ago: 90_000),
            task(2, "failed", "migrate the db", usd: 0.5, ago: 3600),
            task(3, "running", "<script>alert(1)</script><img src=x onerror=alert(2)>", ago: 120),
            task(4, "queued", "write the docs", ago: 30),
        ]
        w.tasks[0].commits = [.init(sha: "abc1234", subject: "fix: <login> & \"form\"")]
        w.tasks[0].pullRequest = "https://github.com/acme/web/pull/7"
        w.tasks[1].issue = "acme/web#12"
        // A finished task keeps the step its agent said last; its row says how many it took instead.
        w.tasks[0].step = "→ Bash swift test"
        w.tasks[0].progress = (1...3).map {
            .init(time: now.addingTimeInterval(Double(-90_000 + $0)), text: "step \($0)")
        }
        w.tasks[2].step = "thinking"
        w.tasks[2].progress = [.init(time: now.addingTimeInterval(-120), text: "queued")]
        var state = WorkspaceState()
        state.branch = "agent/fix-login"
        state.ahead = 1
        state.base = "trunk"
        w.state = state
        w.commits = [.init(sha: "abc1234", subject: "fix: <login> & \"form\"")]
        w.output = (3, "working on it\n\u{1B}[31mred\u{1B}[0m <b>not bold</b>")
        w.readAt = now
        s.workspaces["fix-login"] = w
        return s
    }
}

/// Golden pages: `SO_UPDATE_GOLDEN=1 swift test --filter SoDashboardTests` rewrites them (read the diff).
enum PageGolden {
    static func check(_ name: String, _ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws
    {
        let path = Path.join(RepoPaths.root, "Tests/SoDashboardTests/Golden/\(name)")
        if ProcessInfo.processInfo.environment["SO_UPDATE_GOLDEN"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let want = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            text == want, "\(name) differs from its golden: SO_UPDATE_GOLDEN=1 swift test --filter SoDashboardTests",
            sourceLocation: sourceLocation)
    }
}

/// A value the test changes and a closure reads (a clock, a count).
final class Box<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
