import Foundation
import SoBasics
import SoCompose
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct CreateTests {
    @Test func layoutForLaconicStackWithJobAndConfig() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let r = try await h.initAndCreate(Harness.laconicStack("relay"))
        let files = try h.fs.walk(h.path("dep")).map(\.relative).sorted()
        #expect(
            files == [
                "compose-jobs/docker-compose-relay-migrate.yml", "compose/docker-compose-relay.yml", "config.env",
                "config/relay/relay.env",
                "config/relay/start.sh", "deployment.yml", "kind-config.yml", "spec.yml", "stack.yml",
            ])
        #expect(h.fs.isDirectory(h.path("dep/configmaps/relay-config")))
        #expect(try h.read("dep/spec.yml") == (try h.read("spec.yml")))
        #expect(
            try h.read("dep/stack.yml") == (try h.fs.readText(Path.join(Harness.laconicStack("relay"), "stack.yml"))))
        #expect(
            try h.read("dep/compose/docker-compose-relay.yml")
                == (try h.fs.readText(Path.join(Harness.laconic, "compose/docker-compose-relay.yml"))))
        let d = try DeploymentFile.load(h.path("dep/deployment.yml"), fs: h.fs, diagnostics: DiagnosticSink())
        #expect(d == r.deployment)
        for id in [d.clusterID, d.deploymentID] {
            #expect(id.range(of: #"^laconic-[0-9a-z]+$"#, options: .regularExpression) != nil)
        }
        #expect(d.stackSource == Harness.laconicStackReal("relay"))
        #expect(h.fs.isExecutable(Path.join(Harness.laconic, "config/relay/start.sh")))
        #expect(h.fs.isExecutable(h.path("dep/config/relay/start.sh")))
        #expect(!h.fs.isExecutable(h.path("dep/config/relay/relay.env")))
        // Nothing but the spec and the directory were written next to it.
        #expect(try h.fs.list(h.tmp.path) == ["dep", "spec.yml"])
    }

    @Test func everyOwnLaconicFixtureStackInitsAndCreates() async throws {
        try await Self.everyStackInitsAndCreates(
            in: Harness.laconic, expecting: ["archive", "devnet", "gateway", "observe", "relay"])
    }

    /// laconic's own stacks (../shared/fixtures/laconic-stacks), when the shared corpus is beside the checkout.
    @Test(.enabled(if: RepoPaths.hasShared, "\(RepoPaths.sharedAbsent)"))
    func everySharedLaconicStackInitsAndCreates() async throws {
        try await Self.everyStackInitsAndCreates(in: RepoPaths.laconicStacks, expecting: nil)
    }

    static func everyStackInitsAndCreates(in root: String, expecting: [String]?) async throws {
        let names = try LocalFileSystem().list(Path.join(root, "stacks"))
        #expect(!names.isEmpty)
        if let expecting { #expect(names == expecting) }
        for name in names {
            let h = try Harness()
            defer { h.tmp.cleanup() }
            try await h.initAndCreate(Path.join(root, "stacks", name))
            #expect(h.fs.isFile(h.path("dep/deployment.yml")), "\(name)")
            #expect(
                h.ctx.diagnostics.all.filter { $0.message.contains("unknown key") }.isEmpty,
                "\(name): \(h.ctx.diagnostics.all)")
        }
    }

    @Test func podsCopyReferencedNestedConfigTrees() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate(Harness.laconicStack("observe"))
        for f in [
            "config/observe/scrape/prometheus.yml", "config/observe/dash/boards/heads.json",
            "config/observe/dash/provisioning/sources/scraper.yml", "config/observe/dash/provisioning/alerts/rules.yml",
            "config/observe/probe.yml", "config/observe/prepare.sh",
            "compose/docker-compose-observe-scrape.yml", "compose/docker-compose-observe-dash.yml",
        ] {
            #expect(h.fs.isFile(h.path("dep/" + f)), "\(f)")
        }
        #expect(h.fs.isExecutable(h.path("dep/config/observe/prepare.sh")))
    }

    @Test func refusesExistingDirectoryAndUpdateOfMissingOne() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await h.initAndCreate("example")
        let before = try h.listing()
        await #expect {
            try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        } throws: { e in
            (e as? SoError)?.message.contains("already exists") == true
        }
        await #expect(throws: SoError.self) {
            try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "nope", update: true))
        }
        #expect(try h.listing() == before)
    }

    @Test func configEnvQuotesAndSkipsGeneratedValues() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        let nasty = "it's \"quoted\" # not a comment $HOME\nsecond line"
        try await h.initAndCreate("example", appendToSpec: "")
        var spec = try h.read("spec.yml")
        spec = spec.replacingOccurrences(
            of: "config:\n",
            with:
                "config:\n  A: x\n  S: $generate:hex:16$\n  T: pre-$generate:alnum:8$\n  ENABLED: true\n  EMPTY: ''\n  NASTY: \"it's \\\"quoted\\\" # not a comment $HOME\\nsecond line\"\n"
        )
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
        try await h.initAndCreate(Harness.laconicStack("relay"), config: ["RELAY_WORKERS=FAST"])
        let identity = try h.read("dep/deployment.yml")
        try h.tmp.write("dep/data/relay-queue/marker", "keep")
        try h.tmp.write("dep/config/relay/relay.env", "USER_EDIT=1\n")
        try h.tmp.write("dep/configmaps/relay-config/relay_config", "user file")
        try h.tmp.write("spec.yml", try h.read("spec.yml").replacingOccurrences(of: "FAST", with: "FASTER"))
        let r = try await CreateAction(h.ctx).run(
            CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        #expect(try h.read("dep/deployment.yml") == identity)
        #expect(try h.read("dep/data/relay-queue/marker") == "keep")
        #expect(try h.read("dep/configmaps/relay-config/relay_config") == "user file")
        #expect(try h.read("dep/config.env").contains("RELAY_WORKERS=FASTER"))
        #expect(try h.read("dep/config.env.bak").contains("RELAY_WORKERS=FAST\n"))
        #expect(try h.read("dep/config/relay/relay.env.bak") == "USER_EDIT=1\n")
        #expect(try h.read("dep/config/relay/relay.env") == "QUEUE_DIR=/var/queue\n")
        #expect(!h.tmp.exists("dep/config/relay/start.sh.bak"))
        #expect(Set(r.changed) == ["spec.yml", "config.env", "config/relay/relay.env"])
        #expect(r.removed.isEmpty)
    }

    @Test func updateRemovesFilesThatLeftTheStack() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        // A private copy of the relay stack, so the test can change it.
        let copy = h.path("src")
        for dir in ["stacks/relay", "compose", "compose-jobs", "config/relay"] {
            for f in try h.fs.walk(Path.join(Harness.laconic, dir)) where f.kind == .file {
                try h.fs.write(
                    try h.fs.readData(Path.join(Harness.laconic, dir, f.relative)), to: Path.join(copy, dir, f.relative)
                )
            }
        }
        try await h.initAndCreate(Path.join(copy, "stacks/relay"))
        try h.tmp.write("src/stacks/relay/stack.yml", "name: relay\npods: [relay]\n")
        let r = try await CreateAction(h.ctx).run(
            CreateRequest(specFile: "spec.yml", deploymentDir: "dep", update: true))
        #expect(r.removed == ["compose-jobs/docker-compose-relay-migrate.yml"])
        #expect(!h.tmp.exists("dep/compose-jobs/docker-compose-relay-migrate.yml"))
        #expect(r.changed == ["stack.yml"])
    }

    @Test func failedCreateLeavesNothingBehind() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        try h.tmp.write("spec.yml", try h.read("spec.yml") + "credentials-files:\n  - ./missing.env\n")
        let before = try h.fs.list(h.tmp.path)
        await #expect(throws: SoError.self) {
            try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        }
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
        try h.tmp.write(
            "spec.yml",
            try h.read("spec.yml").replacingOccurrences(of: "  web-data:\n", with: "  web-data: ./data/web-data\n"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "spec.yml", deploymentDir: "dep"))
        #expect(h.fs.isDirectory(h.path("dep/data/web-data")))
        #expect(
            try h.read("dep/kind-config.yml").contains(
                "- hostPath: \(h.path("dep/data/web-data"))\n        containerPath: /mnt/web-data\n"))
    }
}
