import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The example CI pipelines are valid GitHub Actions workflows (check-jsonschema's vendored schema) and
/// call only `so` commands that exist.
@Suite struct ExamplesTests {
    static let checker = LocalProcessRunner.which(
        "check-jsonschema", path: ProcessInfo.processInfo.environment["PATH"] ?? "")
    static let required = ProcessInfo.processInfo.environment["CI"] != nil
    static let workflow = Path.join(RepoPaths.root, "examples/github-actions/agent-workspace.yml")

    @Test(.enabled(if: checker != nil || required, "check-jsonschema is not installed (pip install check-jsonschema)"))
    func workflowMatchesTheGitHubSchema() async throws {
        let checker = try #require(Self.checker, "check-jsonschema must be installed in CI")
        let r = try await LocalProcessRunner().run(
            [checker, "--builtin-schema", "vendor.github-workflows", Self.workflow], workingDirectory: nil,
            environment: nil, timeout: 120)
        #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
    }

    @Test func workflowUsesRealCommands() throws {
        let text = try LocalFileSystem().readText(Self.workflow)
        // Installed with its built-in stacks (a copied binary alone has none).
        for needle in [
            "make -C \"$RUNNER_TEMP/so\" install PREFIX=", "so up agent-workspace",
            "so deployment --name \"$WS\" task --pr", "so down \"$WS\" --discard", "if: always()", "--ttl",
            "pull-requests: write", "issues: write", "--issue \"$GITHUB_REPOSITORY#$ISSUE\"",
        ] {
            #expect(text.contains(needle), "\(needle)")
        }
        // Untrusted titles reach the script through env, never pasted into it.
        #expect(!text.contains("run: |\n          TASK=\"${{"))
        #expect(
            !text.split(separator: "\n").contains { $0.contains("run:") && $0.contains("github.event.issue.title") })
    }
}
