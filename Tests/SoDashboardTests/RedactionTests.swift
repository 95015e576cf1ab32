import Foundation
import SoBasics
import SoKube
import SoTestSupport
import Testing

@testable import SoDashboard
@testable import SoDeploy
@testable import SoWorkspace

/// A Secret's values never reach a page or a stream: as written, encoded, short, in any string the pages show.
@Suite struct RedactionTests {
    /// A value with the characters encodings change (`/`, `+`, `"`, `\`, a space, a non-ASCII letter).
    static let value = #"pa55/wo+rd "q" \ é-Zx9"#
    static let pin = "4821"

    /// Every form of the value a page could show: as written and as something on the way printed it (each made
    /// here by other code than the redactor's: Foundation's encoders, literal text).
    static var forms: [String] {
        var out = [value]
        // Percent-encoded: every byte but letters and digits; keeping `/` (as Python's quote); as a form's field.
        let strict =
            value.addingPercentEncoding(
                withAllowedCharacters: CharacterSet(
                    charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? ""
        let slash =
            value.addingPercentEncoding(
                withAllowedCharacters: CharacterSet(
                    charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/")) ?? ""
        out += [strict, slash, strict.replacingOccurrences(of: "%20", with: "+")]
        // JSON: Foundation's (which escapes `/`), and ASCII-only with `\u00e9`.
        let json = String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
        out += [String(json.dropFirst().dropLast()), #"pa55/wo+rd \"q\" \\ \u00e9-Zx9"#, #"pa55/wo+rd \"q\" \\ é-Zx9"#]
        return out + base64
    }

    /// Inside longer base64 and base64url runs, at each of the three offsets: the characters the value decides.
    static var base64: [String] {
        var out: [String] = []
        for prefix in ["", "a", "ab"] {
            let run = Data(Array(prefix.utf8) + Array(value.utf8) + Array("!".utf8)).base64EncodedString()
            let cut = String(run.dropFirst([0, 2, 3][prefix.count]).prefix(value.utf8.count * 4 / 3 - 1))
            out += [cut, cut.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")]
        }
        return out
    }

    static func secret(_ namespace: String) -> KubeObject {
        KubeObject(
            apiVersion: "v1", kind: "Secret", name: "laconic-aaa-generated-secrets", namespace: namespace,
            labels: [("app", "laconic-aaa")],
            body: [
                (
                    "data",
                    .map([
                        ("API_KEY", .string(Data(value.utf8).base64EncodedString())),
                        ("PIN", .string(Data(pin.utf8).base64EncodedString())),
                        ("FLAG", .string(Data("on".utf8).base64EncodedString())),
                    ])
                )
            ])
    }

    @Test func everyFormOfAValueIsReplaced() async throws {
        let c = FakeCluster()
        try c.seed(Self.secret("x"))
        let r = try await Redactor.read(c, namespace: "x", ctx: DashboardFixture.context(c))
        // Base64 is found inside longer runs (below), not as the value's characters alone.
        for form in Self.forms where !Self.base64.contains(form) {
            #expect(!r.apply("before \(form) after").contains(form), "\(form)")
        }
        for prefix in ["", "a", "ab"] {
            let run = Data(Array(prefix.utf8) + Array(Self.value.utf8) + Array("!".utf8)).base64EncodedString()
            let shown = r.apply("Authorization: Basic \(run)")
            #expect(shown.contains("<secret>") && !Self.base64.contains { shown.contains($0) }, "\(shown)")
        }
        // A short value only as a word of its own; one under four characters is left.
        #expect(r.apply("pin 4821, not 148210 or 4821x") == "pin <secret>, not 148210 or 4821x")
        #expect(r.apply("turned on") == "turned on")
    }

    /// The value planted in every string a workspace's report and its deployment's events carry, and in the error
    /// a read fails with: every page drawn from the feed, and the log stream, hold none of its forms.
    @Test func aValuePlantedEverywhereIsOnNoPageAndInNoStream() async throws {
        let c = try DashboardFixture.cluster()
        try c.seed(Self.secret("fix-login"))
        // Planted as found: the encoded runs whole (with what comes before and after the value in them).
        let runs = ["", "a", "ab"].map {
            "Basic " + Data(Array($0.utf8) + Array(Self.value.utf8) + Array("!".utf8)).base64EncodedString()
        }
        let plantedForms = Self.forms.filter { !Self.base64.contains($0) } + runs + [Self.pin]
        let forms = Self.forms + [Self.pin]
        let planted: @Sendable (Int) -> String = { i in "x \(plantedForms[i % plantedForms.count]) y" }
        try c.seed(
            KubeObject(
                apiVersion: "v1", kind: "Event", name: "ev1", namespace: "fix-login", labels: [],
                body: [
                    ("type", .string("Warning")), ("reason", .string(planted(1))), ("message", .string(planted(2))),
                    ("involvedObject", .map([("kind", .string("Pod")), ("name", .string(planted(3)))])),
                ]))
        c.podLogs["fix-login/laconic-aaa-agent-1/agent"] = "\(planted(4))\n\(planted(5))\n"
        let fields =
            ["text", "command", "issue", "pr_title", "pr_base", "step", "progress", "base", "branch", "pushed"]
            + ["pull_request", "commits", "files", "state", "exit"]
        let report = fields.enumerated().map { (i, f) in
            let body = f == "files" ? "M\t\(planted(i))" : f == "progress" ? "1795000000 \(planted(i))" : planted(i)
            return "@@ 1 \(f) \(body.utf8.count)\n\(body)\n"
        }.joined()
        let failing = Box(false)
        let p = FakeProcessRunner()
        p.fallback = { args in
            guard args.first == "kubectl", args.contains("exec") else { return nil }
            if failing.value { return ProcessResult(exitCode: 1, stdout: "", stderr: "denied: \(planted(6))") }
            return ProcessResult(exitCode: 0, stdout: report)
        }
        let feed = DashboardFeed(
            ctx: DashboardFixture.context(c, processes: p), client: c, kubectlFlags: [], clusterName: "")
        await feed.read()
        var pages: [String] = []
        func draw(_ changed: WorkspaceView? = nil) async throws {
            var s = await feed.snapshot
            if let changed { s.workspaces["fix-login"] = changed }
            let page = PageContext(now: DashboardFixture.now, csrf: "c", actions: true, hostName: "testhost")
            let l = try #require(s.listing("fix-login"))
            let detail = try await feed.detail(l)
            pages += [EverythingPage.page(s, page), CostPage.page(s, page)]
            pages += [
                DeploymentPage.page(s, l, detail, task: 1, page), DeploymentPage.live(s, l, detail, task: 1, page),
            ]
        }
        await feed.readWorkspaces(busy: false)
        #expect(await feed.snapshot.workspaces["fix-login"]?.tasks.count == 1)
        try await draw()
        // A read that fails says why on the page: its error, redacted too.
        failing.value = true
        let probe = WorkspaceProbe(
            namespace: "fix-login", pod: "laconic-aaa-agent-1", container: "agent", path: "/workspace",
            kubectlFlags: [])
        let failed = await feed.readWorkspace(.init(probe: probe, open: false), previous: nil)
        #expect(failed.problem?.contains("<secret>") == true, "\(failed.problem ?? "")")
        try await draw(failed)
        var streamed = ""
        for try await line in await feed.followLog(namespace: "fix-login", container: "agent") {
            streamed += line + "\n"
        }
        #expect(streamed.contains("<secret>"), "\(streamed)")
        for text in pages + [streamed] {
            for form in forms {
                #expect(!text.contains(form) && !text.contains(HTML.escape(form)), "\(form) in \(text.prefix(200))")
            }
        }
    }
}
