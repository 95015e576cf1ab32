import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoCLI
import SoDeploy
import SoSystem
import SoTestSupport
import SoWorkspace
import Testing

struct CLIRun {
    let code: Int32
    let console: CapturedConsole
    var stdout: String { console.stdout }
    var stderr: String { console.stderr }
}

/// `so` run in this process with a fake process runner (`processes`; by default one where kind is not installed).
func runSo(_ args: [String], cwd: String, environment: [String: String] = [:], processes: FakeProcessRunner? = nil)
    async -> CLIRun
{
    let console = CapturedConsole()
    let processes =
        processes
        ?? {
            let p = FakeProcessRunner()
            p.missing = ["kind"]
            return p
        }()
    let ctx = SoContext(
        fs: LocalFileSystem(currentDirectory: cwd), processes: processes, clock: FixedClock(), entropy: SeededEntropy(),
        console: console, environment: environment, builtInRoot: RepoPaths.root)
    let code = await SoCommandLine.execute(args, context: ctx)
    return CLIRun(code: code, console: console)
}

@Suite struct CLITests {
    @Test func laconicArgumentOrderWorks() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let r = await runSo(
            [
                "--stack", "example", "deploy", "--deploy-to", "k8s-kind", "init", "--output", "spec.yml", "--config",
                "A=1,B=two",
            ], cwd: t.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(try t.read("spec.yml").contains("config:\n  GREETING: hello from so\n  A: '1'\n  B: two\n"))
        let c = await runSo(
            ["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "deployments/example"], cwd: t.path)
        #expect(c.code == 0, "\(c.stderr)")
        #expect(c.stdout.contains("created deployment \(t.file("deployments/example"))"))
        #expect(t.exists("deployments/example/deployment.yml"))
    }

    /// A claim's refill (`pool fill --after 1`) waits before it reaches the cluster: its connection then slowed the
    /// claimer's first exec. Here the cluster is not there at all: the wait is over by the time that is found.
    @Test func aRefillWaitsBeforeItReachesTheCluster() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let clock = FixedClock()
        let console = CapturedConsole()
        let ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
            entropy: SeededEntropy(), console: console, environment: ["HOME": t.path], builtInRoot: RepoPaths.root)
        let code = await SoCommandLine.execute(
            ["pool", "fill", "warm", "--at-most", "1", "--after", "1", "--kubeconfig", t.file("none")], context: ctx)
        #expect(code != 0 && console.stderr.contains(t.file("none")), "\(console.stderr)")
        #expect(clock.slept == 1)
    }

    /// `start --dry-run` plans the start the same flags would make: with cluster management (the default) a kind
    /// cluster not running yet would be created; with `--skip-cluster-management` that start has no cluster.
    @Test func startDryRunFollowsSkipClusterManagement() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        #expect(await runSo(["--stack", "example", "deploy", "init", "--output", "spec.yml"], cwd: t.path).code == 0)
        #expect(
            await runSo(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path).code
                == 0)
        let env = ["KUBECONFIG": t.file("no-kubeconfig"), "HOME": t.path]
        for (flags, planned) in [([String](), true), (["--skip-cluster-management"], false)] {
            let kind = FakeProcessRunner()
            kind.expect(["kind", "get", "clusters"], stdout: "")
            let r = await runSo(
                ["deployment", "--dir", "dep", "start", "--dry-run"] + flags, cwd: t.path, environment: env,
                processes: kind)
            #expect((r.code == 0) == planned, "\(flags): \(r.stdout)\n\(r.stderr)")
            #expect(
                (r.stdout + r.stderr).contains("would create kind cluster") == planned,
                "\(flags): \(r.stdout)\n\(r.stderr)")
            #expect(r.stderr.contains("no cluster to use") != planned, "\(flags): \(r.stderr)")
            #expect(kind.unexpected.isEmpty && kind.pending.isEmpty, "\(kind.unexpected) \(kind.pending)")
        }
    }

    @Test func versionAndHelp() async throws {
        let v = await runSo(["--version"], cwd: "/")
        #expect(v.code == 0 && v.stdout == SoVersion.current)
        let h = await runSo(["--help"], cwd: "/")
        #expect(h.code == 0)
        for group in ["DEPLOY SUBCOMMANDS", "STACKS SUBCOMMANDS", "Example:"] { #expect(h.stdout.contains(group)) }
    }

    /// Every command's help has an example.
    @Test func everyCommandHasAnExample() async throws {
        let commands = [
            ["deploy"], ["deploy", "init"], ["deploy", "create"], ["deployment"], ["deployment", "render"],
            ["deployment", "start"], ["deployment", "up"], ["deployment", "stop"],
            ["deployment", "status"], ["deployment", "ps"], ["deployment", "logs"], ["deployment", "exec"],
            ["deployment", "port-forward"], ["deployment", "restart"], ["deployment", "update-envs"],
            ["deployment", "rotate-secrets"], ["stack"], ["stack", "list"], ["stack", "show"],
            ["fetch-stack"], ["setup-repositories"], ["version"], ["completion"],
        ]
        for c in commands {
            let r = await runSo(c + ["--help"], cwd: "/")
            #expect(r.code == 0 && r.stdout.contains("Example:"), "\(c)")
        }
    }

    @Test func completionScripts() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let r = await runSo(["completion", shell], cwd: "/")
            #expect(r.code == 0 && r.stdout.contains("deploy"), "\(shell)")
        }
        let bad = await runSo(["completion", "tcsh"], cwd: "/")
        #expect(bad.code != 0 && bad.stderr.hasPrefix("error: unknown shell 'tcsh'"))
    }

    @Test func usageErrorsUseTheErrorFormat() async throws {
        let r = await runSo(["deploy", "init", "--bogus"], cwd: "/")
        #expect(r.code != 0)
        #expect(r.stderr.hasPrefix("error: "))
        #expect(r.stderr.contains("\nhint: run 'so deploy init --help' for usage"))
    }

    @Test func stackListAndShow() async throws {
        let l = await runSo(["stack", "list"], cwd: "/")
        #expect(l.code == 0 && l.stdout.contains("example"))
        let s = await runSo(["stack", "show", "example", "-o", "json"], cwd: "/")
        #expect(s.code == 0, "\(s.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any]
        #expect(json?["name"] as? String == "example")
        #expect((json?["images"] as? [String])?.contains("nginx:1.27-alpine") == true)
        let laconic = await runSo(["stack", "show", RepoPaths.laconicFixture("observe")], cwd: "/")
        #expect(
            laconic.code == 0 && laconic.stdout.contains("pod observe-dash:")
                && laconic.stdout.contains("service scraper: prom/prometheus:v2.51.0"), "\(laconic.stdout)")
    }
}

/// Under `-o json` stdout is JSON only: fetch-stack's "would clone" line is not printed before it.
@Suite struct RepoCLIJSONTests {
    @Test func fetchStackDryRunJSONIsJSONOnly() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let r = await runSo(
            ["fetch-stack", "example.org/team/stacks", "--dry-run", "-o", "json"], cwd: t.path,
            environment: ["SO_REPO_BASE_DIR": t.path])
        #expect(r.code == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(json?["repository"] as? String == "example.org/team/stacks", "\(r.stdout)")
        // Text keeps the line.
        let text = await runSo(
            ["fetch-stack", "example.org/team/stacks", "--dry-run"], cwd: t.path,
            environment: ["SO_REPO_BASE_DIR": t.path])
        #expect(
            text.stdout.contains("would clone https://example.org/team/stacks into \(t.path)/stacks"), "\(text.stdout)")
    }
}

@Suite struct RenderCLITests {
    func makeDeployment(_ t: TempDir, extraConfig: String = "") async throws {
        let i = await runSo(["--stack", "example", "deploy", "init", "--output", "spec.yml"], cwd: t.path)
        #expect(i.code == 0, "\(i.stderr)")
        if !extraConfig.isEmpty {
            try t.write(
                "spec.yml",
                try t.read("spec.yml").replacingOccurrences(of: "config:\n", with: "config:\n" + extraConfig))
        }
        let c = await runSo(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        #expect(c.code == 0, "\(c.stderr)")
    }

    @Test func rendersYamlJsonAndDirectories() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        try await makeDeployment(t)
        let y = await runSo(["deployment", "--dir", "dep", "render"], cwd: t.path)
        #expect(y.code == 0, "\(y.stderr)")
        #expect(y.stdout.hasPrefix("apiVersion: v1\nkind: Namespace\n"))
        #expect(y.stdout.components(separatedBy: "\n---\n").count == 7)
        let again = await runSo(["deployment", "--dir", "dep", "render"], cwd: t.path)
        #expect(again.stdout == y.stdout)
        let j = await runSo(["deployment", "--dir", "dep", "render", "-o", "json"], cwd: t.path)
        let list = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect((list?["items"] as? [Any])?.count == 7)
        let d = await runSo(["deployment", "--dir", "dep", "render", "--output-dir", "k8s"], cwd: t.path)
        #expect(d.code == 0, "\(d.stderr)")
        let files = try LocalFileSystem().list(t.file("k8s")).filter { $0 != ".so-render" }
        #expect(files.first == "01-namespace-\(try deploymentID(t)).yaml" && files.count == 7)
        // A render replaces the files it wrote (a stale one of its own goes) and nothing else.
        try t.write("k8s/99-configmap-gone.yaml", "x")
        try t.write("k8s/.so-render", (files + ["99-configmap-gone.yaml"]).joined(separator: "\n"))
        let again2 = await runSo(["deployment", "--dir", "dep", "render", "--output-dir", "k8s"], cwd: t.path)
        #expect(again2.code == 0, "\(again2.stderr)")
        #expect(!t.exists("k8s/99-configmap-gone.yaml"))
        #expect(try LocalFileSystem().list(t.file("k8s")).filter { $0 != ".so-render" } == files)
    }

    /// A directory holding files render did not write is refused, and never emptied (a project folder, the deployment itself).
    @Test func renderNeverDeletesOtherFiles() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        try await makeDeployment(t)
        try t.write("proj/main.go", "package main\n")
        let refused = await runSo(["deployment", "--dir", "dep", "render", "--output-dir", "proj"], cwd: t.path)
        #expect(
            refused.code == 64 && refused.stderr.contains("holds files render did not write (main.go)")
                && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(
            try t.read("proj/main.go") == "package main\n"
                && (try LocalFileSystem().list(t.file("proj"))) == ["main.go"])
        let forced = await runSo(
            ["deployment", "--dir", "dep", "render", "--output-dir", "proj", "--force", "-o", "json"], cwd: t.path)
        #expect(forced.code == 0, "\(forced.stderr)")
        #expect(try t.read("proj/main.go") == "package main\n")
        #expect(try LocalFileSystem().list(t.file("proj")).filter { $0.hasSuffix(".json") }.count == 7)
        let intoDeployment = await runSo(["deployment", "--dir", "dep", "render", "--output-dir", "dep"], cwd: t.path)
        #expect(intoDeployment.code == 64 && t.exists("dep/deployment.yml"))
        // -o names the format, as on every other verb; a path there is a usage error, not a directory named json/.
        let wrong = await runSo(["deployment", "--dir", "dep", "render", "--output", "somewhere"], cwd: t.path)
        #expect(wrong.code == 64 && !t.exists("somewhere"))
    }

    func deploymentID(_ t: TempDir) throws -> String {
        try t.read("dep/deployment.yml").split(separator: "\n").first { $0.hasPrefix("deployment-id: ") }!.dropFirst(
            "deployment-id: ".count
        ).description
    }

    /// Generated secret values never appear; the Secret is referenced, and shown with placeholders only on request.
    @Test func secretsAreReferencedNeverRendered() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        try await makeDeployment(t, extraConfig: "  API_TOKEN: $generate:hex:32$\n")
        let r = await runSo(["deployment", "--dir", "dep", "render"], cwd: t.path)
        #expect(r.code == 0)
        #expect(!r.stdout.contains("kind: Secret"))
        #expect(r.stdout.contains("name: \(try deploymentID(t))-generated-secrets"))
        let p = await runSo(["deployment", "--dir", "dep", "render", "--placeholder-secrets"], cwd: t.path)
        #expect(p.stdout.contains("kind: Secret") && p.stdout.contains("API_TOKEN: <generated at start>"))
        #expect(try !t.read("dep/config.env").contains("API_TOKEN"))
    }

    @Test func missingDeploymentDirectory() async throws {
        let r = await runSo(["deployment", "--dir", "/nonexistent/dep", "render"], cwd: "/")
        #expect(r.code != 0 && r.stderr.hasPrefix("error: deployment directory not found: /nonexistent/dep\nhint: "))
    }
}

/// Output to a reader that went away (`so … | head -1`).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: E2E.binary), "the so binary is not built"))
struct ClosedOutputTests {
    /// `so` ends as a C program ends on SIGPIPE: silently, with 141, not with a crash and a stack trace.
    @Test func aClosedStandardOutputEndsSoQuietlyWith141() throws {
        let t = try TempDir("so-closed-output")
        defer { t.cleanup() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: E2E.binary)
        p.arguments = [
            "--stack", Path.join(RepoPaths.root, "Tests/SoCLITests/E2EStacks/crash"), "deploy", "init", "--output",
            "spec.yml",
        ]
        p.currentDirectoryURL = URL(fileURLWithPath: t.path)
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        // The reader is gone before so writes a byte: every write to standard output fails with EPIPE.
        try out.fileHandleForReading.close()
        try p.run()
        p.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationReason == .exit && p.terminationStatus == 141, "\(stderr)")
        #expect(!stderr.contains("Fatal error") && !stderr.contains("stack trace"), "\(stderr)")
        #expect(t.exists("spec.yml"))
    }
}
