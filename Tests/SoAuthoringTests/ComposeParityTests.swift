import Foundation
import SoBasics
import SoCompose
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoAuthoring
@testable import SoDeploy

/// What kompose converts and docker compose interpolates, `so` creates: paths that hold variables
/// (env_file, binds, build contexts, config and secret files), and errors that name the variable.
@Suite struct ComposeParityTests {
    static var interpolated: String { Path.join(RepoPaths.composeFixtures, "interpolated") }

    /// laconic's fixturenet-blast shape: `env_file: ../config/…/${NETWORK:-fixturenet}.config` (laconic-so creates it).
    @Test func aLaconicStackWithVariablesInItsPathsCreates() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Harness.laconicStack("devnet"))
        let files = try h.fs.walk(h.path("dep/config")).map(\.relative).sorted()
        #expect(files == ["devnet-networks/devnet-genesis.json", "devnet-networks/devnet.config"])
        let model = try DeploymentLoader.load(h.path("dep"), fs: h.fs, diagnostics: DiagnosticSink())
        let node = try #require(model.pods.first?.compose.services.first)
        #expect(node.envFiles.map(\.path) == ["../config/devnet-networks/devnet.config"])
        #expect(node.volumes.compactMap(\.source).contains("../config/devnet-networks/devnet-genesis.json"))
        #expect(node.image == "example/chain-node:devnet")
    }

    /// The variable's value from the spec's config picks the file, as under docker compose.
    @Test func theSpecsConfigChoosesTheInterpolatedFiles() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Harness.laconicStack("devnet"), config: ["NETWORK=testnet"])
        let files = try h.fs.walk(h.path("dep/config")).map(\.relative).sorted()
        #expect(files == ["devnet-networks/testnet-genesis.json", "devnet-networks/testnet.config"])
    }

    /// A file that the interpolated path does not find is named by what refers to it (not "mounted").
    @Test func aMissingInterpolatedFileIsNamedByItsEntry() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        await #expect {
            try await h.initAndCreate(Harness.laconicStack("devnet"), config: ["NETWORK=mainnet"])
        } throws: { error in
            let e = error as? SoError
            return e?.message.hasPrefix("env_file of service 'node' not found: ") == true
                && e?.message.hasSuffix("/devnet-networks/mainnet.config") == true
                && e?.location?.file.hasSuffix("compose/docker-compose-devnet.yml") == true
        }
        #expect(!h.fs.exists(h.path("dep")))
    }

    /// Build context, dockerfile, env_file, config and secret files, labels and extra_hosts of a plain compose file.
    @Test func everyPathAndValueComposeInterpolatesIsFollowed() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Self.interpolated)
        let files = try h.fs.walk(h.path("dep/compose")).map(\.relative).sorted()
        #expect(files.contains("env/web.env") && files.contains("conf/site.conf"))
        #expect(!files.contains { $0.contains("$") })
        let model = try DeploymentLoader.load(h.path("dep"), fs: h.fs, diagnostics: DiagnosticSink())
        let web = try #require(model.pods.first?.compose.services.first)
        #expect(web.labels.first { $0.0 == "example.org/tier" }?.1 == "front")
        #expect(web.extraHosts == ["upstream.internal:10.1.2.3"])
        #expect(web.environment.first { $0.key == "GREETING" }?.value == "hello")
        let stack = try h.ctx.locator.resolve(Self.interpolated, diagnostics: DiagnosticSink())
        let target = try #require(try BuildAction(h.ctx).targets(stack).first)
        #expect(target.image == "example/web:dev")
        guard case .dockerfile(let context, let dockerfile, let args, _) = target.recipe else {
            Issue.record("not a dockerfile build")
            return
        }
        #expect(
            context == Path.join(Self.interpolated, "web")
                && dockerfile == Path.join(Self.interpolated, "web/Dockerfile"))
        #expect(args.map { "\($0.0)=\($0.1)" } == ["BASE_TAG=bookworm"])
    }

    /// `build-containers` interpolates from the shell's environment, as `docker compose build` does.
    @Test func buildValuesComeFromTheEnvironment() throws {
        let h = try Harness(environment: ["TAG": "1.2", "WEB_DOCKERFILE": "Other.Dockerfile"])
        defer { h.tmp.cleanup() }
        let stack = try h.ctx.locator.resolve(Self.interpolated, diagnostics: DiagnosticSink())
        let target = try #require(try BuildAction(h.ctx).targets(stack).first)
        #expect(target.image == "example/web:1.2")
        guard case .dockerfile(_, let dockerfile, _, _) = target.recipe else {
            Issue.record("not a dockerfile build")
            return
        }
        #expect(dockerfile == Path.join(Self.interpolated, "web/Other.Dockerfile"))
    }

    /// `ports: ["$DB_PORT"]` with DB_PORT unset: the error names the variable and where to set it.
    @Test func anEmptyPortNamesTheVariableThatEmptiedIt() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("app/compose.yaml", "services:\n  db:\n    image: postgres\n    ports: [\"$DB_PORT\"]\n")
        await #expect {
            try await InitAction(h.ctx).run(InitRequest(stack: h.path("app"), output: "spec.yml"))
        } throws: { error in
            let e = error as? SoError
            return e?.message
                == "invalid port '': expected at most IP:HOST:CONTAINER (written '$DB_PORT'; DB_PORT is not set)"
                && e?.hint?.hasPrefix("set DB_PORT in the spec's config: ('so deploy init --config DB_PORT=…'") == true
                && e?.location?.line == 4
        }
        await #expect {
            try await InitAction(h.ctx).run(
                InitRequest(stack: h.path("app"), config: ["DB_PORT=abc"], output: "spec.yml"))
        } throws: { error in
            let e = error as? SoError
            return e?.message.hasSuffix("(written '$DB_PORT'; DB_PORT from the deployment's config)") == true
                && e?.hint?.hasPrefix("fix DB_PORT in the spec's config") == true
        }
        try await InitAction(h.ctx).run(InitRequest(stack: h.path("app"), config: ["DB_PORT=5432"], output: "spec.yml"))
        #expect(h.fs.isFile(h.path("spec.yml")))
    }
}
