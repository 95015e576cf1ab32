import Foundation
import SoBasics
import SoCompose
import SoStack
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct InitTests {
    /// Optional pods: asked on a terminal when --with is absent, never asked in scripts, copied by create.
    @Test func optionalPodsAskedOnATerminalAndCopied() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        h.console.answers = ["redis"]
        try await InitAction(h.ctx).run(InitRequest(stack: "agent-workspace", output: "asked.yml"))
        #expect(h.console.questions.count == 1 && h.console.questions[0].contains("postgres, redis"))
        #expect(try h.read("asked.yml").contains("with:\n  - redis\n"))
        h.console.answers = nil  // not a terminal: no question, no optional pods
        try await InitAction(h.ctx).run(InitRequest(stack: "agent-workspace", output: "script.yml"))
        #expect(!(try h.read("script.yml")).contains("with:"))
        try await CreateAction(h.ctx).run(CreateRequest(specFile: "asked.yml", deploymentDir: "dep"))
        #expect(h.fs.isFile(h.path("dep/compose/docker-compose-redis.yml")))
        #expect(!h.fs.exists(h.path("dep/compose/docker-compose-postgres.yml")))
        let model = try DeploymentLoader.load(h.path("dep"), fs: h.fs, diagnostics: DiagnosticSink())
        #expect(model.pods.map(\.name) == ["agent-workspace", "egress-proxy", "redis"])
    }

    @Test func skeletonForLaconicStack() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: Harness.laconicStack("relay"), output: "spec.yml"))
        #expect(
            try h.read("spec.yml") == """
                stack: \(Harness.laconicStackReal("relay"))
                deploy-to: k8s-kind
                network:
                  ports:
                    relay:
                      - '8080'
                volumes:
                  relay-queue:
                  relay-scratch:
                configmaps:
                  relay-config: ./configmaps/relay-config
                secrets: {}

                """)
    }

    @Test func configFlagsFileAndDefaults() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("extra.env", "FROM_FILE='a b'\nGREETING=from-file\n")
        try await InitAction(h.ctx).run(
            InitRequest(
                stack: "example", config: ["A=1,B=two", "URL=http://h/?a=1,b=2", "GREETING=cli"],
                configFile: "extra.env", output: "spec.yml"))
        let spec = try Spec.load(h.path("spec.yml"), fs: h.fs, diagnostics: DiagnosticSink())
        let config = Dictionary(uniqueKeysWithValues: spec.config.map { ($0.key, $0.value) })
        #expect(config == ["GREETING": "cli", "FROM_FILE": "a b", "A": "1", "B": "two", "URL": "http://h/?a=1,b=2"])
        #expect(spec.config.first?.key == "GREETING")
        #expect(try h.read("spec.yml").contains("  A: '1'\n"))
    }

    @Test func stackDefaultsApplyWithoutFlags() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        #expect(try h.read("spec.yml").contains("config:\n  GREETING: hello from so\n"))
    }

    @Test func refusesToOverwriteWithoutForce() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try h.tmp.write("spec.yml", "keep me\n")
        await #expect(throws: SoError.self) {
            try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml"))
        }
        #expect(try h.read("spec.yml") == "keep me\n")
        try await InitAction(h.ctx).run(InitRequest(stack: "example", output: "spec.yml", force: true))
        #expect(try h.read("spec.yml").hasPrefix("stack: example\n"))
    }

    @Test func targetFlagRules() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        await #expect(throws: SoError.self) {
            try await InitAction(h.ctx).run(InitRequest(stack: "example", deployTo: "k8s", output: "a.yml"))
        }
        await #expect(throws: SoError.self) {
            try await InitAction(h.ctx).run(InitRequest(stack: "example", kubeConfig: "kc", output: "b.yml"))
        }
        await #expect(throws: SoError.self) {
            try await InitAction(h.ctx).run(InitRequest(stack: "example", deployTo: "compose", output: "c.yml"))
        }
        try h.tmp.write("kc", "apiVersion: v1\n")
        try await InitAction(h.ctx).run(
            InitRequest(
                stack: "example", deployTo: "k8s", kubeConfig: "kc", imageRegistry: "reg.example/x", output: "d.yml"))
        #expect(
            try h.read("d.yml").contains(
                "deploy-to: k8s\nkube-config: \(h.path("kc"))\nimage-registry: reg.example/x\n"))
        #expect(try h.listing().sorted() == ["d.yml", "kc"])
    }

    @Test func portRecipesProduceHostMappings() async throws {
        let h = try Harness()
        defer { h.tmp.cleanup() }
        try await InitAction(h.ctx).run(
            InitRequest(stack: "example", mapPortsToHost: "localhost-same", output: "spec.yml"))
        #expect(try h.read("spec.yml").contains("    web:\n      - 127.0.0.1:80:80\n"))
    }

    @Test func configArgumentSplitting() throws {
        #expect(try InitAction.parseConfigArgument("A=1,B=two").map { "\($0)=\($1)" } == ["A=1", "B=two"])
        #expect(try InitAction.parseConfigArgument("URL=a,b=c").map { "\($0)=\($1)" } == ["URL=a,b=c"])
        #expect(
            try InitAction.parseConfigArgument("X=1,test_variable_1=2,Y_2=3").map { "\($0)=\($1)" } == [
                "X=1,test_variable_1=2", "Y_2=3",
            ])
        #expect(try InitAction.parseConfigArgument("URL=a, b,c").map { "\($0)=\($1)" } == ["URL=a, b,c"])
        #expect(try InitAction.parseConfigArgument("EQ=x=y").map { "\($0)=\($1)" } == ["EQ=x=y"])
        #expect(try InitAction.parseConfigArgument("EMPTY=").map { "\($0)=\($1)" } == ["EMPTY="])
        #expect(throws: SoError.self) { try InitAction.parseConfigArgument("novalue") }
        #expect(throws: SoError.self) { try InitAction.parseConfigArgument("=x") }
    }
}
