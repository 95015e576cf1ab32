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

/// A `so` that found no built-in stacks (a binary copied without its share/so) fails every command that
/// needs one, with one error line naming where it looked and a hint; `--root` points it at a root.
@Suite struct BuiltInRootCLITests {
    func run(_ args: [String], cwd: String) async -> CLIRun {
        let console = CapturedConsole()
        let processes = FakeProcessRunner()
        processes.missing = ["kind"]
        var ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: cwd), processes: processes, clock: FixedClock(),
            entropy: SeededEntropy(),
            console: console, environment: [:], builtInRoot: nil)
        ctx.builtInSearched = ["/tmp/share/so", "a checkout at or above /tmp/x"]
        let code = await SoCommandLine.execute(args, context: ctx)
        return CLIRun(code: code, console: console)
    }

    @Test func commandsNeedingBuiltInStacksFailSayingWhereTheyLooked() async throws {
        let t = try TempDir()
        defer { t.cleanup() }
        for args in [
            ["stack", "list"], ["stack", "list", "-o", "json"], ["stack", "show", "example"],
            ["--stack", "example", "deploy", "init", "--output", "spec.yml"],
        ] {
            let r = await run(args, cwd: t.path)
            #expect(r.code == 1, "\(args)")
            let lines = r.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines[0].hasPrefix("error: no built-in stacks found"), "\(args): \(lines)")
            #expect(lines.first?.contains("looked in /tmp/share/so, a checkout at or above /tmp/x") == true, "\(lines)")
            #expect(
                lines.last?.hasPrefix("hint: ") == true && lines.last?.contains("--root") == true
                    && lines.last?.contains("SO_ROOT") == true)
            #expect(r.stdout.isEmpty)
        }
        #expect(try LocalFileSystem().list(t.path).isEmpty)
    }

    @Test func rootOptionFindsThem() async throws {
        let r = await run(["stack", "list", "--root", RepoPaths.root], cwd: "/")
        #expect(r.code == 0 && r.stdout.contains("example"), "\(r.stderr)")
        let missing = await run(["stack", "list", "--root", "/nonexistent-so-root"], cwd: "/")
        #expect(
            missing.code == 1
                && missing.stderr.hasPrefix(
                    "error: no built-in stacks found (looked in /nonexistent-so-root (--root))\n"),
            "\(missing.stderr)")
    }

    /// A stack given by path needs no built-in root.
    @Test func stackPathsWorkWithoutARoot() async throws {
        let r = await run(["stack", "show", RepoPaths.laconicFixture("relay")], cwd: "/")
        #expect(r.code == 0 && r.stdout.contains("relay"), "\(r.stderr)")
    }
}
