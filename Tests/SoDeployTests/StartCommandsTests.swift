import Foundation
import SoBasics
import SoKube
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// stack.yml map-form pods' pre_start_command / post_start_command run on the host around the start.
@Suite struct StartCommandsTests {
    static func makeStack(_ t: TempDir) throws -> String {
        try t.write("repos/app/deploy/docker-compose.yml", "services:\n  web:\n    image: nginx:1.27\n")
        try t.write(
            "src/stack-orchestrator/stacks/app/stack.yml",
            """
            version: "1.0"
            name: app
            pods:
              - name: web
                repository: acme/app
                path: deploy
                pre_start_command: ./prepare.sh
                post_start_command: echo ready
            """)
        return t.file("src/stack-orchestrator/stacks/app")
    }

    @Test func theyRunAroundTheStartAndAFailureStopsIt() async throws {
        let t = try TempDir("so-start-commands")
        defer { t.cleanup() }
        let c = try await ClusterHarness(
            stack: try Self.makeStack(t), environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        let p = c.h.processes
        p.expect(["sh", "-c", "./prepare.sh"])
        p.expect(["sh", "-c", "echo ready"])
        _ = try await c.start()
        #expect(p.pending.isEmpty && p.unexpected.isEmpty, "\(p.calls.map(\.arguments))")
        #expect(
            p.calls.first { $0.arguments == ["sh", "-c", "./prepare.sh"] }?.workingDirectory
                == t.file("repos/app/deploy"))
        // A failing pre_start_command stops the start before anything reaches the cluster.
        let before = c.cluster.calls.count
        p.expect(["sh", "-c", "./prepare.sh"], exitCode: 2, stderr: "prepare: no database dump\n")
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message == "pre_start_command of pod web exited 2: prepare: no database dump"
        }
        #expect(
            !c.cluster.calls[before...].contains { $0.hasPrefix("apply ") || $0.hasPrefix("create ") },
            "\(c.cluster.calls[before...])")
    }

    /// A stack that moved away after deploy create: the start goes on without its commands, and says so
    /// (it used to skip them without a word).
    @Test func aStackThatCannotBeResolvedWarnsThatNoCommandsRun() async throws {
        let t = try TempDir("so-start-commands")
        defer { t.cleanup() }
        let c = try await ClusterHarness(
            stack: try Self.makeStack(t), environment: ["SO_REPO_BASE_DIR": t.file("repos")])
        try FileManager.default.removeItem(atPath: t.file("src/stack-orchestrator/stacks/app/stack.yml"))
        _ = try await c.start()
        let p = c.h.processes
        #expect(
            !p.calls.contains { $0.arguments.starts(with: ["sh", "-c"]) } && p.unexpected.isEmpty,
            "\(p.calls.map(\.arguments))")
        let messages = c.ctx.diagnostics.all.map(\.message)
        #expect(
            messages.contains {
                $0.hasPrefix("cannot resolve stack ") && $0.contains(" for its pre_start_commands: ")
                    && $0.hasSuffix("; none run")
            },
            "\(messages)")
    }
}
