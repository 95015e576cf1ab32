import Foundation
import SoBasics
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring

/// `so build-containers --agent NAME`: the agent's image from its container directory, its pinned wheels downloaded
/// first (a fake `python3` on PATH stands in for pip; a fake engine records its argv).
@Suite struct AgentImageBuildTests {
    static func stack(_ t: TempDir) throws {
        try t.write(
            "stk/stacks/ws/stack.yml",
            """
            name: ws
            containers: [ws-base]
            pods: [ws]
            agents:
              mine:
                task: mine -p "$TASK"
                image: ws-mine:local
              bare:
                task: bare "$TASK"

            """)
        try t.write("stk/compose/docker-compose-ws.yml", "services:\n  agent:\n    image: ws-base:local\n")
        try t.write("stk/container-build/ws-base/Dockerfile", "FROM scratch\n")
        try t.write("stk/container-build/ws-mine/Dockerfile", "FROM ws-base:local\nCOPY wheels/ /tmp/wheels/\n")
        try t.write(
            "stk/container-build/ws-mine/wheels.txt", "# python-version: 3.11\n# the CLI, pinned\nmine-cli==1.2.3\n\n")
        try t.write(
            "bin/engine",
            """
            #!/bin/sh
            echo "engine $*" >> "$FAKE_LOG"
            case "$*" in *inspect*ws-base*) echo sha256:base; exit 0;; *inspect*) exit 1;; esac
            # The context the build is given, as the engine sees it.
            [ "$1" = build ] && for a; do ctx=$a; done && ls "$ctx/wheels" >> "$FAKE_LOG"
            exit 0
            """)
        try t.write(
            "bin/python3",
            """
            #!/bin/sh
            echo "python3 $*" >> "$FAKE_LOG"
            while [ $# -gt 0 ]; do [ "$1" = --dest ] && dest=$2; shift; done
            : > "$dest/mine_cli-1.2.3-py3-none-manylinux_2_17_x86_64.whl"
            """)
        try LocalFileSystem().setExecutable(t.file("bin/engine"), true)
        try LocalFileSystem().setExecutable(t.file("bin/python3"), true)
    }

    func context(_ t: TempDir, console: CapturedConsole) -> SoContext {
        var ctx = SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: LocalProcessRunner(), clock: FixedClock(),
            entropy: SeededEntropy(), console: console,
            environment: [
                "PATH": t.file("bin") + ":/usr/bin:/bin", "FAKE_LOG": t.file("engine.log"), "DOCKER": "engine",
                "TMPDIR": t.file("tmp"),
            ],
            builtInRoot: nil)
        ctx.options.quiet = true
        return ctx
    }

    @Test func theAgentsImageIsBuiltFromItsPinnedWheelsAfterTheStacksOwn() async throws {
        let t = try TempDir("so-agent-build")
        defer { t.cleanup() }
        try Self.stack(t)
        try FileManager.default.createDirectory(atPath: t.file("tmp"), withIntermediateDirectories: true)
        let console = CapturedConsole()
        var req = BuildRequest(stack: t.file("stk/stacks/ws"))
        req.agent = "mine"
        var ctx = context(t, console: console)
        ctx.options.quiet = false  // what is said: the pin
        let built = try await BuildAction(ctx).run(req)
        #expect(built.map(\.image) == ["ws-mine:local"])
        let log = try t.read("engine.log").split(separator: "\n").map(String.init)
        let root = LocalFileSystem().realpath(t.file("stk"))
        #expect(log.count == 6, "\(log)")
        guard log.count == 6 else { return }
        // The stack's own image exists (skipped); the agent's wheels are downloaded for the image's Python, binary only.
        #expect(log[0] == "engine image inspect --format {{.Id}} ws-base:local")
        #expect(log[1] == "engine image inspect --format {{.Id}} ws-mine:local")
        #expect(
            log[2].hasPrefix(
                "python3 -m pip download --disable-pip-version-check --progress-bar off --only-binary=:all: --implementation cp --python-version 3.11 --platform manylinux_2_28_"
            ) && log[2].contains("--requirement ") && log[2].hasSuffix("/wheels/wheels.txt"), "\(log[2])")
        // Built with the Dockerfile where it is and the scratch context holding the wheels and the requirements.
        #expect(
            log[3].hasPrefix("engine build --tag ws-mine:local --file \(root)/container-build/ws-mine/Dockerfile ")
                && !log[3].hasSuffix("container-build/ws-mine"), "\(log[3])")
        #expect(log[4...] == ["mine_cli-1.2.3-py3-none-manylinux_2_17_x86_64.whl", "wheels.txt"], "\(log[4...])")
        #expect(console.stdout.contains("ws-mine:local: mine-cli==1.2.3 (pinned in"), "\(console.stdout)")
        // The scratch context is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.file("tmp")).isEmpty)
    }

    @Test func forceRebuildRebuildsTheAgentsImageNotItsBase() async throws {
        let t = try TempDir("so-agent-build")
        defer { t.cleanup() }
        try Self.stack(t)
        try FileManager.default.createDirectory(atPath: t.file("tmp"), withIntermediateDirectories: true)
        var req = BuildRequest(stack: t.file("stk/stacks/ws"))
        req.agent = "mine"
        req.forceRebuild = true
        let built = try await BuildAction(context(t, console: CapturedConsole())).run(req)
        #expect(built.map(\.image) == ["ws-mine:local"])
        let log = try t.read("engine.log").split(separator: "\n").map(String.init)
        #expect(
            log.first == "engine image inspect --format {{.Id}} ws-base:local"
                && !log.contains { $0.contains("--tag ws-base") })
        #expect(!log.contains("engine image inspect --format {{.Id}} ws-mine:local"), "\(log)")
    }

    @Test func anAgentWithoutAnImageAndAnUnknownOneAreNamed() async throws {
        let t = try TempDir("so-agent-build")
        defer { t.cleanup() }
        try Self.stack(t)
        for (agent, message) in [
            ("bare", "agent bare of ws names no image: to build"), ("nope", "ws has no agent 'nope'"),
        ] {
            var req = BuildRequest(stack: t.file("stk/stacks/ws"))
            req.agent = agent
            do {
                _ = try await BuildAction(context(t, console: CapturedConsole())).run(req)
                Issue.record("\(agent) was built")
            } catch let e as SoError {
                #expect(e.message == message && e.hint?.isEmpty == false, "\(e.message) \(e.hint ?? "")")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: t.file("engine.log")), "nothing ran")
    }

    @Test func wheelsTxtNeedsThePythonVersionAndHoldsRequirementsOnly() throws {
        let w = try AgentImageBuild.wheels("# python-version: 3.11\nfoo==1\n  # note\nbar>=2\n", path: "w.txt")
        #expect(w == AgentImageBuild.Wheels(pythonVersion: "3.11", requirements: ["foo==1", "bar>=2"]))
        for (text, message, line) in [
            ("foo==1\n", "w.txt does not say the image's Python version", nil),
            ("# python-version: three\nfoo\n", "python-version 'three' is not a version like 3.11", 1),
            (
                "# python-version: 3.11\n--index-url http://x\n",
                "--index-url http://x is a pip option: wheels.txt holds requirements only", 2
            ),
        ] as [(String, String, Int?)] {
            do {
                _ = try AgentImageBuild.wheels(text, path: "w.txt")
                Issue.record("accepted: \(text)")
            } catch let e as SoError {
                #expect(
                    e.message == message && e.location?.line == line, "\(e.message) \(String(describing: e.location))")
            }
        }
        #expect(
            AgentImageBuild.containerName("registry.example:5000/team/so-agent-workspace-claude:local")
                == "so-agent-workspace-claude")
    }

    @Test func theBuiltInStackBuildsClaudeAndAiderFromPinnedWheels() throws {
        let root = RepoPaths.root
        for agent in ["claude", "aider"] {
            let dir = Path.join(root, "container-build/so-agent-workspace-\(agent)")
            let w = try AgentImageBuild.wheels(
                try String(contentsOfFile: Path.join(dir, "wheels.txt"), encoding: .utf8), path: dir)
            #expect(w.requirements.first?.contains("==") == true, "\(agent): \(w.requirements)")
            #expect(FileManager.default.fileExists(atPath: Path.join(dir, "Dockerfile")))
        }
        let stack = try String(contentsOfFile: Path.join(root, "stacks/agent-workspace/stack.yml"), encoding: .utf8)
        #expect(
            stack.contains("image: so-agent-workspace-claude:local")
                && stack.contains("image: so-agent-workspace-aider:local"))
    }
}
