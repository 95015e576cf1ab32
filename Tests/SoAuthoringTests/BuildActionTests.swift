import Foundation
import SoBasics
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring

/// `so build-containers` with a fake `docker` on PATH that records its argv (the real process runner).
@Suite struct BuildTests {
    static func stack(_ t: TempDir) throws {
        try t.write("stk/stacks/web/stack.yml", "name: web\ncontainers: [cerc/tool, plain]\npods: [web]\n")
        try t.write(
            "stk/container-build/cerc-tool/build.sh",
            "#!/bin/bash\necho \"build.sh for $SO_IMAGE in $CERC_CONTAINER_BASE_DIR\" >> \"$FAKE_DOCKER_LOG\"\n")
        try t.write("stk/container-build/plain/Dockerfile", "FROM scratch\n")
        try t.write(
            "stk/compose/docker-compose-web.yml",
            """
            services:
              api:
                build:
                  context: ../src/api
                  dockerfile: Dockerfile.dev
                  args: {VERSION: "1.2", DEBUG: "0"}
                  target: dev
              worker:
                image: acme/worker:2
                build: ../src/worker
              db:
                image: postgres:17
            """)
        try t.write("stk/src/api/Dockerfile.dev", "FROM scratch\n")
        try t.write("stk/src/worker/Dockerfile", "FROM scratch\n")
        try t.write(
            "bin/docker",
            """
            #!/bin/sh
            echo "docker $*" >> "$FAKE_DOCKER_LOG"
            if [ "$1" = image ]; then case "$*" in *acme/worker:2*) echo sha256:abc; exit 0;; *) exit 1;; esac; fi
            exit 0
            """)
        try LocalFileSystem().setExecutable(t.file("bin/docker"), true)
    }

    func context(_ t: TempDir, console: CapturedConsole) -> SoContext {
        SoContext(
            fs: LocalFileSystem(currentDirectory: t.path), processes: LocalProcessRunner(), clock: FixedClock(),
            entropy: SeededEntropy(), console: console,
            environment: ["PATH": t.file("bin") + ":/usr/bin:/bin", "FAKE_DOCKER_LOG": t.file("docker.log")],
            builtInRoot: nil)
    }

    @Test func buildsContainersAndComposeServicesWithDocker() async throws {
        let t = try TempDir("so-build")
        defer { t.cleanup() }
        try Self.stack(t)
        let console = CapturedConsole()
        var ctx = context(t, console: console)
        ctx.options.quiet = true  // captured runs, not attached to the terminal
        let built = try await BuildAction(ctx).run(BuildRequest(stack: t.file("stk/stacks/web")))
        #expect(built.map(\.image) == ["cerc/tool:local", "plain:local", "web-api:local"])
        let log = try t.read("docker.log").split(separator: "\n").map(String.init)
        let root = LocalFileSystem().realpath(t.file("stk"))
        #expect(
            log == [
                "docker image inspect --format {{.Id}} cerc/tool:local",
                "build.sh for cerc/tool:local in \(root)/container-build",
                "docker image inspect --format {{.Id}} plain:local",
                "docker build --tag plain:local --file \(root)/container-build/plain/Dockerfile \(root)/container-build/plain",
                "docker image inspect --format {{.Id}} web-api:local",
                "docker build --tag web-api:local --file \(root)/src/api/Dockerfile.dev --build-arg DEBUG=0 --build-arg VERSION=1.2 --target dev \(root)/src/api",
                // acme/worker:2 exists: skipped
                "docker image inspect --format {{.Id}} acme/worker:2",
            ], "\(log)")
    }

    /// With KIND_EXPERIMENTAL_PROVIDER=podman the images are built into podman's store (where start reads
    /// and loads them from), and build.sh scripts are told DOCKER=podman; one that calls `docker build` by name
    /// (as laconic-so's do) runs podman too.
    @Test func buildsWithTheKindProvidersEngine() async throws {
        let t = try TempDir("so-build-podman")
        defer { t.cleanup() }
        try Self.stack(t)
        try t.write(
            "bin/podman",
            try t.read("bin/docker").replacingOccurrences(of: "echo \"docker $*\"", with: "echo \"podman $*\""))
        try LocalFileSystem().setExecutable(t.file("bin/podman"), true)
        try t.write(
            "stk/container-build/cerc-tool/build.sh",
            "#!/bin/bash\necho \"build.sh with DOCKER=$DOCKER\" >> \"$FAKE_DOCKER_LOG\"\ndocker build -t cerc/tool:local .\n"
        )
        var ctx = context(t, console: CapturedConsole())
        ctx.environment["KIND_EXPERIMENTAL_PROVIDER"] = "podman"
        ctx.environment["TMPDIR"] = t.file("tmp")
        try LocalFileSystem().createDirectory(t.file("tmp"))
        ctx.options.quiet = true
        _ = try await BuildAction(ctx).run(BuildRequest(stack: t.file("stk/stacks/web")))
        #expect(try LocalFileSystem().list(t.file("tmp")).isEmpty, "the docker shim is removed after the build")
        let log = try t.read("docker.log").split(separator: "\n").map(String.init)
        #expect(
            log.contains("build.sh with DOCKER=podman")
                && log.contains { $0.hasPrefix("podman build --tag plain:local --file ") }, "\(log)")
        #expect(log.contains("podman build -t cerc/tool:local ."), "\(log)")
        #expect(!log.contains { $0.hasPrefix("docker ") }, "\(log)")
    }

    @Test func includeForceAndErrorsAtBuildTime() async throws {
        let t = try TempDir("so-build")
        defer { t.cleanup() }
        try Self.stack(t)
        var ctx = context(t, console: CapturedConsole())
        ctx.options.quiet = true
        var req = BuildRequest(stack: t.file("stk/stacks/web"))
        req.include = ["worker"]
        req.forceRebuild = true
        #expect(try await BuildAction(ctx).run(req).map(\.image) == ["acme/worker:2"])
        #expect(try t.read("docker.log").contains("docker build --tag acme/worker:2"))
        req.include = ["nope"]
        await #expect { try await BuildAction(ctx).run(req) } throws: {
            ($0 as? SoError)?.message == "web builds no container named 'nope'"
        }
        // A missing Dockerfile is an error when building (naming the compose file and line), not before.
        try LocalFileSystem().remove(t.file("stk/src/api/Dockerfile.dev"))
        req.include = ["api"]
        await #expect { try await BuildAction(ctx).run(req) } throws: { e in
            let err = e as? SoError
            return err?.message.hasPrefix("Dockerfile of api not found:") == true && err?.location?.line == 2
        }
    }
}
