import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoGitHub
import SoKube
import SoSystem
import SoTestSupport
import SoWorkspace
import Testing

@testable import SoCLI

/// What `so` prints, verb by verb, is checked in under `Tests/Fixtures/cli-golden/`: each file holds one command line,
/// its exit code, stdout and stderr (text and `-o json`, run over a fake cluster with a fixed clock and seeded
/// entropy), or one command's `--help`. A changed message fails here; `SO_UPDATE_GOLDEN=1` rewrites the files (as
/// render's goldens), and the diff is what to review.
enum CLIGolden {
    static let directory = Path.join(RepoPaths.fixtures, "cli-golden")
    static let update = "SO_UPDATE_GOLDEN=1 swift test --filter CLIGoldenTests"
    static var updating: Bool { ProcessInfo.processInfo.environment["SO_UPDATE_GOLDEN"] == "1" }

    static func path(_ name: String) -> String { Path.join(directory, name + ".txt") }

    /// `text` is the golden `name`; with SO_UPDATE_GOLDEN=1 it becomes it.
    static func check(_ name: String, _ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws
    {
        let fs = LocalFileSystem()
        if updating {
            try fs.createDirectory(Path.dirname(path(name)))
            try fs.writeText(text, to: path(name))
            return
        }
        let golden = try? fs.readText(path(name))
        #expect(golden != nil, "no golden \(path(name)): run \(update)", sourceLocation: sourceLocation)
        guard let golden, golden != text else { return }
        let got = text.components(separatedBy: "\n")
        let want = golden.components(separatedBy: "\n")
        let line = (0..<min(got.count, want.count)).first { got[$0] != want[$0] } ?? min(got.count, want.count)
        Issue.record(
            """
            so's output for \(name) differs from \(path(name)) at line \(line + 1):
              golden: \(line < want.count ? want[line] : "(end)")
              now:    \(line < got.count ? got[line] : "(end)")
            if the change is intended, run \(update) and review the diff (git diff Tests/Fixtures/cli-golden)
            """, sourceLocation: sourceLocation)
    }
}

/// One scripted session: a deployment made, rendered, started, inspected and stopped on a fake cluster, and a
/// workspace brought up and down, through `SoCommandLine.execute` as `main` runs it.
final class GoldenSession: @unchecked Sendable {
    let t: TempDir
    let cluster = FakeCluster()
    var outputs: [(name: String, text: String)] = []

    init() throws {
        t = try TempDir()
        cluster.onApply = { json in
            guard case .object(var o) = json else { return }
            switch o["kind"]?.string {
            case "Deployment":
                let replicas = Double(o["spec"]?["replicas"]?.int ?? 1)
                if case .object(var meta)? = o["metadata"] {
                    meta["generation"] = .number(1)
                    o["metadata"] = .object(meta)
                }
                o["status"] = .object([
                    "observedGeneration": .number(1), "replicas": .number(replicas),
                    "updatedReplicas": .number(replicas),
                    "availableReplicas": .number(replicas),
                ])
            case "Job":
                o["status"] = .object([
                    "succeeded": .number(1),
                    "conditions": .array([.object(["type": .string("Complete"), "status": .string("True")])]),
                ])
            default: break
            }
            json = .object(o)
        }
        try t.write("kubeconfig", FakeKubeconfig.text)
    }

    /// Runs `so ARGS` in the session's directory and keeps what it printed as golden `name`.
    @discardableResult
    func run(_ name: String, _ args: [String]) async -> Int32 {
        let console = CapturedConsole()
        let processes = FakeProcessRunner()
        processes.missing = ["kind"]
        let cluster = self.cluster
        var ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console,
            environment: ["HOME": t.path, "SO_HOME": t.file("home"), "SO_REPO_BASE_DIR": t.file("cerc")],
            builtInRoot: RepoPaths.root, connect: { _ in cluster })
        ctx.renewsLocks = false
        let code = await SoCommandLine.execute(args, context: ctx)
        let line = args.map { $0.contains(" ") || $0.contains("$") || $0.isEmpty ? "'\($0)'" : $0 }.joined(
            separator: " ")
        var text = "$ so \(line)\nexit: \(code)\n--- stdout\n\(console.stdout)\n--- stderr\n\(console.stderr)\n"
        text = text.replacingOccurrences(of: t.path, with: "<tmp>").replacingOccurrences(
            of: RepoPaths.root, with: "<repo>")
        outputs.append((name, text))
        return code
    }

    var deploymentID: String {
        get throws {
            let line = try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id: ") }
            return String(try #require(line).dropFirst("deployment-id: ".count))
        }
    }

    /// A running pod of the deployment's web service, as the kubelet would report it.
    func seedPod() throws {
        let id = try deploymentID
        try cluster.seed(
            KubeObject(
                apiVersion: "v1", kind: "Pod", name: "web-abc", namespace: id,
                labels: [("app", id), ("app.kubernetes.io/instance", id), ("app.kubernetes.io/component", "example")],
                body: [
                    (
                        "spec",
                        .map([
                            (
                                "containers",
                                .list([
                                    .map([
                                        ("name", .string("web")), ("image", .string("nginx")),
                                        ("ports", .list([.map([("containerPort", .int(80))])])),
                                    ])
                                ])
                            )
                        ])
                    )
                ]))
        cluster.update("Pod", "web-abc", namespace: id) { p in
            guard case .object(var o) = p else { return }
            o["status"] = .object([
                "phase": .string("Running"), "podIP": .string("10.0.0.7"),
                "containerStatuses": .array([
                    .object(["name": .string("web"), "ready": .bool(true), "restartCount": .number(2)])
                ]),
            ])
            p = .object(o)
        }
        cluster.podLogs["\(id)/web-abc/web"] = "one\ntwo\nthree\n"
    }

    /// The values of every Secret the session's starts made (none may appear in what so printed).
    var secretValues: [String] {
        cluster.all.filter { $0.0.type.kind == "Secret" }.flatMap { _, json in
            (json["data"]?.object ?? [:]).values.compactMap {
                $0.string.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
            }
                + (json["stringData"]?.object ?? [:]).values.compactMap(\.string)
        }
    }
}

@Suite(.serialized) struct CLIGoldenTests {
    /// Every verb's text and `-o json` output over the fake cluster matches its golden.
    @Test func verbsMatchTheirGoldens() async throws {
        let s = try GoldenSession()
        defer { s.t.cleanup() }
        let cluster = ["--kubeconfig", "kubeconfig"]
        await s.run("version", ["version"])
        await s.run("version-flag", ["--version"])
        await s.run("stack-list", ["stack", "list"])
        await s.run("stack-list-json", ["stack", "list", "-o", "json"])
        await s.run("stack-show", ["stack", "show", "example"])
        await s.run("stack-show-json", ["stack", "show", "example", "-o", "json"])
        await s.run(
            "deploy-init-dry-run", ["--dry-run", "--stack", "example", "deploy", "init", "--output", "spec.yml"])
        #expect(
            await s.run(
                "deploy-init",
                [
                    "--stack", "example", "deploy", "init", "--output", "spec.yml", "--config",
                    "API_TOKEN=$generate:hex:16$",
                ]) == 0)
        await s.run(
            "deploy-create-dry-run",
            ["--dry-run", "deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"])
        #expect(
            await s.run("deploy-create", ["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"])
                == 0)
        let dep = ["deployment", "--dir", "dep"]
        await s.run("deployment-render", dep + ["render"])
        await s.run("deployment-render-json", dep + ["render", "-o", "json"])
        await s.run("deployment-render-report", dep + ["render", "--report"])
        await s.run("deployment-render-report-json", dep + ["render", "--report", "-o", "json"])
        await s.run("deployment-start-dry-run", dep + cluster + ["start", "--skip-cluster-management", "--dry-run"])
        await s.run(
            "deployment-start-dry-run-json",
            dep + cluster + ["start", "--skip-cluster-management", "--dry-run", "--progress", "json"])
        #expect(
            await s.run(
                "deployment-start", dep + cluster + ["start", "--skip-cluster-management", "--progress", "plain"]) == 0)
        await s.run(
            "deployment-start-json", dep + cluster + ["start", "--skip-cluster-management", "--progress", "json"])
        try s.seedPod()
        await s.run("deployment-status", dep + cluster + ["status"])
        await s.run("deployment-status-json", dep + cluster + ["status", "-o", "json"])
        await s.run("deployment-ps", dep + cluster + ["ps"])
        await s.run("deployment-ps-json", dep + cluster + ["ps", "-o", "json"])
        await s.run("deployment-logs", dep + cluster + ["logs", "--tail", "2"])
        await s.run("deployment-list", ["deployment", "list"] + cluster)
        await s.run("deployment-list-json", ["deployment", "list", "-o", "json"] + cluster)
        var secrets = s.secretValues
        await s.run("deployment-update-envs", dep + cluster + ["update-envs"])
        await s.run("deployment-restart-no-sync", dep + cluster + ["restart", "--no-sync"])
        await s.run("deployment-restart", dep + cluster + ["restart"])
        await s.run("deployment-rotate-secrets", dep + cluster + ["rotate-secrets", "API_TOKEN"])
        secrets += s.secretValues
        // The workspace verbs on a deployment that is no workspace.
        for verb in [
            ["log"], ["log", "-o", "json"], ["diff"], ["push"], ["fetch"], ["apply"], ["merge"], ["task", "do it"],
        ] {
            await s.run(
                "deployment-\(verb[0])-not-a-workspace" + (verb.contains("json") ? "-json" : ""), dep + cluster + verb)
        }
        await s.run("deployment-stop-dry-run", dep + cluster + ["stop", "--dry-run"])
        await s.run("deployment-stop", dep + cluster + ["stop"])
        // Refused: a group option the verb does not take, and so's --dry-run on a verb that does not honour it.
        await s.run("refused-format", dep + ["-o", "json", "start"])
        await s.run("refused-dry-run", ["--dry-run"] + dep + ["status"])
        // A workspace: up, up again (-o json), list, down.
        await s.run(
            "up-dry-run", ["--dry-run", "up", "example", "--name", "demo", "--skip-cluster-management"] + cluster)
        await s.run(
            "up", ["up", "example", "--name", "demo", "--skip-cluster-management", "--progress", "plain"] + cluster)
        await s.run("deployment-status-by-name", ["deployment", "--name", "demo", "status"] + cluster)
        await s.run(
            "up-json",
            ["up", "example", "--name", "demo", "--skip-cluster-management", "--progress", "plain", "-o", "json"]
                + cluster)
        await s.run("down-dry-run", ["--dry-run", "down", "demo"] + cluster)
        await s.run("down", ["down", "demo"] + cluster)
        // An agent workspace (its repository named, so none is carried in): up, then down without reading its work.
        let ws =
            [
                "up", "agent-workspace", "--name", "ws", "--config", "GIT_REPO=https://example.org/acme/web",
                "--skip-cluster-management",
                "--progress", "plain", "--no-wait",
            ] + cluster
        await s.run("up-workspace", ws)
        await s.run("down-workspace-refused", ["down", "ws"] + cluster)
        await s.run("down-workspace-discard", ["down", "ws", "--discard"] + cluster)
        await s.run("cleanup-dry-run-json", ["cleanup", "--expired", "--dry-run", "-o", "json"] + cluster)
        await s.run("fetch-stack-dry-run", ["fetch-stack", "example.org/team/stacks", "--dry-run"])
        await s.run("fetch-stack-dry-run-json", ["fetch-stack", "example.org/team/stacks", "--dry-run", "-o", "json"])
        await s.run("github-inbox-empty", ["github", "inbox"] + cluster)
        try await Self.seedInbox(s.cluster)
        await s.run("github-inbox", ["github", "inbox"] + cluster)
        await s.run("github-inbox-pending-json", ["github", "inbox", "--state", "pending", "-o", "json"] + cluster)
        await s.run("github-inbox-taken-json", ["github", "inbox", "--state", "taken", "-o", "json"] + cluster)
        await s.run("github-inbox-bad-state", ["github", "inbox", "--state", "PENDING!"] + cluster)

        secrets += s.secretValues
        #expect(!secrets.isEmpty, "the session's starts made no Secret: the check below proves nothing")
        for (name, text) in s.outputs {
            for value in secrets where value.count >= 8 {
                #expect(!text.contains(value), "\(name) prints a secret value")
            }
            #expect(!text.contains(FakeKubeconfig.token), "\(name) prints the kubeconfig's token")
            for hidden in ["secret-ish", "do not print me", "Fix the login"] {
                #expect(!text.contains(hidden), "\(name) prints a text of an issue or comment")
            }
            try CLIGolden.check(name, text)
        }
        try Self.noStaleGoldens(prefix: "", except: "help-", made: s.outputs.map(\.name))
    }

    /// Two deliveries in the inbox (a label, then a comment whose body no listing may print), the first taken.
    static func seedInbox(_ cluster: FakeCluster) async throws {
        let inbox = GitHubInbox(client: cluster)
        let base = Date(timeIntervalSince1970: 1_767_225_600)
        for (i, (name, payload)) in [
            ("issues", #"{"action":"labeled","label":{"name":"so"},"#),
            (
                "issue_comment",
                #"{"action":"created","comment":{"id":9,"body":"/so secret-ish text","author_association":"NONE"},"#
            ),
        ].enumerated() {
            let body =
                payload + #""repository":{"full_name":"acme/web"},"sender":{"login":"octocat"},"#
                + #""issue":{"number":52,"title":"Fix the login","body":"do not print me"}}"#
            guard case .event(let e) = GitHubEvent.parse(event: name, delivery: "d-\(i + 1)", body: Data(body.utf8))
            else { throw SoError("the golden's delivery \(i + 1) does not parse") }
            try await inbox.record(e, at: base.addingTimeInterval(Double(i)))
        }
        let first = try #require(try await inbox.list().first)
        #expect(try await inbox.mark(first, state: "taken", at: base.addingTimeInterval(5), by: "host/42/0a1b2c3d"))
    }

    /// Every command's `--help` matches its golden: a verb lists the options it takes and no other.
    @Test func helpMatchesItsGolden() throws {
        var made: [String] = []
        for command in VerbTakesTests.commands(SoCommand.self) {
            let path = SoCommandLine.path(to: command)
            let name = "help-" + (path.isEmpty ? "so" : path.replacingOccurrences(of: " ", with: "-"))
            let help =
                command == SoCommand.self
                ? SoCommand.helpMessage(columns: 100) : SoCommand.helpMessage(for: command, columns: 100)
            try CLIGolden.check(name, "$ so \(path.isEmpty ? "" : path + " ")--help\n\(help)\n")
            made.append(name)
        }
        try Self.noStaleGoldens(prefix: "help-", except: nil, made: made)
    }

    /// Every golden file (named `prefix…`) was made by the test (a verb renamed or gone leaves none behind).
    static func noStaleGoldens(prefix: String, except: String?, made: [String]) throws {
        guard !CLIGolden.updating else { return }
        let files = try LocalFileSystem().list(CLIGolden.directory).filter {
            $0.hasPrefix(prefix) && !(except.map($0.hasPrefix) ?? false)
        }
        for f in files where !made.contains(String(f.dropLast(".txt".count))) {
            Issue.record(
                "\(f) in \(CLIGolden.directory) belongs to no command line of the test: remove it, or run \(CLIGolden.update)"
            )
        }
    }
}
