import Foundation
import Testing
@testable import SoActions
import SoBasics
import SoCompose
import SoStack
import SoTestSupport

extension Harness {
    /// init + create of a stack into `dir`, with extra spec text appended before create.
    @discardableResult
    func initAndCreate(_ stack: String, dir: String = "dep", config: [String] = [], appendToSpec: String = "") async throws -> CreateResult {
        try await InitAction(ctx).run(InitRequest(stack: stack, config: config, output: "spec.yml", force: true))
        if !appendToSpec.isEmpty { try tmp.write("spec.yml", try read("spec.yml") + appendToSpec) }
        return try await CreateAction(ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: dir))
    }
}

@Suite struct CreateTests {
    @Test func layoutForLaconicTestStack() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let r = try await h.initAndCreate(Harness.laconicStack("test"))
        let files = try h.fs.walk(h.path("dep")).map(\.relative).sorted()
        #expect(files == ["compose-jobs/docker-compose-test-job.yml", "compose/docker-compose-test.yml", "config.env", "config/test/script.sh",
                          "config/test/settings.env", "deployment.yml", "kind-config.yml", "spec.yml", "stack.yml"])
        #expect(h.fs.isDirectory(h.path("dep/configmaps/test-config")))
        #expect(try h.read("dep/spec.yml") == (try h.read("spec.yml")))
        #expect(try h.read("dep/stack.yml") == (try h.fs.readText(Path.join(Harness.laconicStack("test"), "stack.yml"))))
        #expect(try h.read("dep/compose/docker-compose-test.yml") == (try h.fs.readText(Path.join(Harness.laconic, "compose/docker-compose-test.yml"))))
        let d = try DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink())
        #expect(d == r.deployment)
        for id in [d.clusterID, d.deploymentID] { #expect(id.range(of: #"^laconic-[0-9a-z]+$"#, options: .regularExpression) != nil) }
        #expect(d.stackSource == Harness.laconicStackReal("test"))
        #expect(h.fs.isExecutable(h.path("dep/config/test/script.sh")) == h.fs.isExecutable(Path.join(Harness.laconic, "config/test/script.sh")))
        // Nothing but the spec and the directory were written next to it.
        #expect(try h.fs.list(h.tmp.path) == ["dep", "spec.yml"])
    }

    @Test func everyLaconicFixtureStackInitsAndCreates() async throws {
        for name in try LocalFileSystem().list(Path.join(Harness.laconic, "stacks")) {
            let h = try Harness()
            defer { h.tmp.cleanup() }
            try await h.initAndCreate(Harness.laconicStack(name))
            #expect(h.fs.isFile(h.path("dep/deployment.yml")), "\(name)")
            #expect(h.ctx.diagnostics.all.filter { $0.message.contains("unknown key") }.isEmpty, "\(name): \(h.ctx.diagnostics.all)")
        }
    }

    @Test func monitoringCopiesReferencedConfigTrees() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Harness.laconicStack("monitoring"))
        for f in ["config/monitoring/prometheus/prometheus.yml", "config/monitoring/grafana/dashboards/watcher-dashboard.json",
                  "config/monitoring/grafana/provisioning/datasources/prometheus.yml", "config/monitoring/blackbox.yml",
                  "compose/docker-compose-prom-server.yml", "compose/docker-compose-grafana.yml"] {
            #expect(h.fs.isFile(h.path("dep/" + f)), "\(f)")
        }
    }

    @Test func refusesExistingDirectoryAndUpdateOfMissingOne() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate("example")
        let before = try h.listing()
        await #expect { try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep")) } throws: { e in
            (e as? SoError)?.message.contains("already exists") == true
        }
        await #expect(throws: SoError.self) { try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "nope", update: true)) }
        #expect(try h.listing() == before)
    }

    @Test func configEnvQuotesAndSkipsGeneratedValues() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let nasty = "it's \"quoted\" # not a comment $HOME\nsecond line"
        try await h.initAndCreate("example", appendToSpec: "")
        var spec = try h.read("spec.yml")
        spec = spec.replacingOccurrences(of: "config:\n", with: "config:\n  A: x\n  S: $generate:hex:16$\n  T: pre-$generate:alnum:8$\n  ENABLED: true\n  EMPTY: ''\n  NASTY: \"it's \\\"quoted\\\" # not a comment $HOME\\nsecond line\"\n")
        try h.tmp.write("spec.yml", spec)
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep2"))
        let text = try h.read("dep2/config.env")
        #expect(!text.contains("$generate:") && !text.contains("\nS=") && !text.contains("\nT="))
        let pairs = try DotEnv.parse(text, file: "config.env")
        #expect(pairs.map(\.key) == ["A", "ENABLED", "EMPTY", "NASTY", "GREETING"])
        #expect(pairs.first { $0.key == "NASTY" }?.value == nasty)
        #expect(pairs.first { $0.key == "ENABLED" }?.value == "true")
        #expect(pairs.first { $0.key == "EMPTY" }?.value == "")
    }

    @Test func updateKeepsIdentityAndDataAndBacksUpChanges() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Harness.laconicStack("test"), config: ["CERC_TEST_PARAM_3=FAST"])
        let identity = try h.read("dep/deployment.yml")
        try h.tmp.write("dep/data/test-data-bind/marker", "keep")
        try h.tmp.write("dep/config/test/settings.env", "USER_EDIT=1\n")
        try h.tmp.write("dep/configmaps/test-config/test_config", "user file")
        try h.tmp.write("spec.yml", try h.read("spec.yml").replacingOccurrences(of: "FAST", with: "FASTER"))
        let r = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        #expect(try h.read("dep/deployment.yml") == identity)
        #expect(try h.read("dep/data/test-data-bind/marker") == "keep")
        #expect(try h.read("dep/configmaps/test-config/test_config") == "user file")
        #expect(try h.read("dep/config.env").contains("CERC_TEST_PARAM_3=FASTER"))
        #expect(try h.read("dep/config.env.bak").contains("CERC_TEST_PARAM_3=FAST\n"))
        #expect(try h.read("dep/config/test/settings.env.bak") == "USER_EDIT=1\n")
        #expect(try h.read("dep/config/test/settings.env") == "ANSWER=42\n")
        #expect(!h.tmp.exists("dep/config/test/script.sh.bak"))
        #expect(Set(r.changed) == ["spec.yml", "config.env", "config/test/settings.env"])
        #expect(r.removed.isEmpty)
    }

    @Test func updateRemovesFilesThatLeftTheStack() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        // A private copy of the laconic test stack, so the test can change it.
        let copy = h.path("src")
        for dir in ["stacks/test", "compose", "compose-jobs", "config/test"] {
            for f in try h.fs.walk(Path.join(Harness.laconic, dir)) where !f.relative.contains("/") || dir == "config/test" {
                try h.fs.write(try h.fs.readData(Path.join(Harness.laconic, dir, f.relative)), to: Path.join(copy, dir, f.relative))
            }
        }
        try await h.initAndCreate(Path.join(copy, "stacks/test"))
        try h.tmp.write("src/stacks/test/stack.yml", "name: test\npods: [test]\n")
        let r = try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        #expect(r.removed == ["compose-jobs/docker-compose-test-job.yml"])
        #expect(!h.tmp.exists("dep/compose-jobs/docker-compose-test-job.yml"))
        #expect(r.changed == ["stack.yml"])
    }

    @Test func failedCreateLeavesNothingBehind() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        try h.tmp.write("spec.yml", try h.read("spec.yml") + "credentials-files:\n  - ./missing.env\n")
        let before = try h.fs.list(h.tmp.path)
        await #expect(throws: SoError.self) { try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep")) }
        #expect(try h.fs.list(h.tmp.path) == before)
    }

    @Test func reusesTheHostsKindCluster() async throws {
        let h = try Harness(kindClusters: "shared-one\nother\n")
        defer { h.tmp.cleanup() }
        let r = try await h.initAndCreate("example")
        #expect(r.deployment.clusterID == "shared-one")
        #expect(h.processes.unexpected.isEmpty && h.processes.pending.isEmpty)
    }

    @Test func relativeVolumePathsGetDataDirectoriesAndKindMounts() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        try h.tmp.write("spec.yml", try h.read("spec.yml").replacingOccurrences(of: "  web-data:\n", with: "  web-data: ./data/web-data\n"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        #expect(h.fs.isDirectory(h.path("dep/data/web-data")))
        #expect(try h.read("dep/kind-config.yml").contains("- hostPath: \(h.path("dep/data/web-data"))\n        containerPath: /mnt/web-data\n"))
    }
}
