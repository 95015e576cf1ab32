import Foundation
import Testing
import SoActions
import SoBasics
import SoCLI
import SoTestSupport

struct CLIRun {
    let code: Int32
    let console: CapturedConsole
    var stdout: String { console.stdout }
    var stderr: String { console.stderr }
}

func runSo(_ args: [String], cwd: String, environment: [String: String] = [:]) async -> CLIRun {
    let console = CapturedConsole()
    let processes = FakeProcessRunner()
    processes.missing = ["kind"]
    let ctx = SoContext(fs: LocalFileSystem(currentDirectory: cwd), processes: processes, clock: FixedClock(), entropy: SeededEntropy(),
                        console: console, environment: environment, builtInRoot: RepoPaths.root)
    let code = await SoCommandLine.execute(args, context: ctx)
    return CLIRun(code: code, console: console)
}

@Suite struct CLITests {
    @Test func laconicArgumentOrderWorks() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        let r = await runSo(["--stack", "example", "deploy", "--deploy-to", "k8s-kind", "init", "--output", "spec.yml", "--config", "A=1,B=two"], cwd: t.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(try t.read("spec.yml").contains("config:\n  GREETING: hello from so\n  A: '1'\n  B: two\n"))
        let c = await runSo(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "deployments/example"], cwd: t.path)
        #expect(c.code == 0, "\(c.stderr)")
        #expect(c.stdout.contains("created deployment \(t.file("deployments/example"))"))
        #expect(t.exists("deployments/example/deployment.yml"))
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
        let commands = [["deploy"], ["deploy", "init"], ["deploy", "create"], ["stack"], ["stack", "list"], ["stack", "show"],
                        ["fetch-stack"], ["setup-repositories"], ["version"], ["completion"]]
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
        let laconic = await runSo(["stack", "show", Path.join(RepoPaths.laconicStacks, "stacks", "monitoring")], cwd: "/")
        #expect(laconic.code == 0 && laconic.stdout.contains("pod grafana:") && laconic.stdout.contains("service prometheus: prom/prometheus:v2.49.1"))
    }
}
