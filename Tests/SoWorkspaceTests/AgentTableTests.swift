import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy
@testable import SoWorkspace

@Suite struct AgentTableTests {
    @Test func theAgentChoosesTheTaskTheKeysAndTheHosts() async throws {
        var w = try WorkspaceHarness()
        w.ctx.environment["OPENAI_API_KEY"] = "test-openai-key-not-real"
        var req = UpRequest(stack: "agent-workspace")
        req.name = "cx"
        req.agent = "codex"
        req.config = ["GIT_REPO=https://github.com/acme/web"]
        req.cluster = w.clusterOptions
        req.timeout = 30
        _ = try await UpAction(w.ctx).run(req)
        let dir = w.h.path("so-home/deployments/cx")
        #expect(try w.h.read("so-home/deployments/cx/spec.yml").contains("agent: codex"))
        let model = try DeploymentLoader.load(dir, fs: w.h.fs, diagnostics: DiagnosticSink())
        #expect(model.spec.workspace?.task == #"codex exec --full-auto "$TASK""#)
        #expect(model.spec.secretEnv == ["GITHUB_TOKEN", "GIT_TOKEN", "OPENAI_API_KEY"], "\(model.spec.secretEnv)")
        let egress = model.spec.sections.egress?.entries ?? []
        #expect(egress.contains("api.openai.com") && !egress.contains("api.anthropic.com"), "\(egress)")
        // Only the agent's key went into the Secret.
        let ns = try #require(w.cluster.object("Namespace", "cx"))
        let id = try #require(ns.labels["app.kubernetes.io/instance"])
        let secret = try #require(w.cluster.object("Secret", "\(id)-generated-secrets", namespace: "cx"))
        #expect(
            secret.at("data", "OPENAI_API_KEY")?.string == Data("test-openai-key-not-real".utf8).base64EncodedString())
        #expect(secret.at("data", "ANTHROPIC_API_KEY") == nil)
    }

    @Test func theDefaultIsClaudeAndAnUnknownAgentIsNamed() async throws {
        let w = try WorkspaceHarness()
        try await w.up("cl", config: ["GIT_REPO=https://github.com/acme/web"])
        let model = try DeploymentLoader.load(
            w.h.path("so-home/deployments/cl"), fs: w.h.fs, diagnostics: DiagnosticSink())
        #expect(model.spec.workspace?.agent == "claude" && model.spec.workspace?.task?.hasPrefix("claude -p") == true)
        // Its JSON events, for the cost in every task's report (and rendered as text by tasks logs).
        #expect(model.spec.workspace?.task?.hasSuffix("--output-format stream-json --verbose") == true)
        #expect(
            model.spec.secretEnv.contains("ANTHROPIC_API_KEY")
                && model.spec.sections.egress?.entries.contains("api.anthropic.com") == true)
        var req = UpRequest(stack: "agent-workspace")
        req.name = "nope"
        req.agent = "nope"
        req.cluster = w.clusterOptions
        do {
            _ = try await UpAction(w.ctx).run(req)
            Issue.record("an unknown agent was accepted")
        } catch let e as SoError {
            #expect(
                e.message == "unknown agent 'nope' for agent-workspace"
                    && e.hint?.contains("claude, codex, gemini, aider") == true, "\(e.message) \(e.hint ?? "")")
        }
        #expect(!w.h.fs.isDirectory(w.h.path("so-home/deployments/nope")))
    }

    @Test func aGatewayIsReachedWithNoEditOfTheSpec() async throws {
        let w = try WorkspaceHarness()
        try await w.up(
            "gw", config: ["GIT_REPO=https://github.com/acme/web", "ANTHROPIC_BASE_URL=http://10.250.0.1:4000"])
        // The CLI gets the variable (config reaches every container) and egress gets the gateway's address and port.
        let objects = w.cluster.all.filter { $0.0.namespace == "gw" }.map(\.1)
        let text = objects.map { "\($0)" }.joined(separator: "\n")
        let policies = objects.filter { $0["kind"]?.string == "NetworkPolicy" }
        let rules = policies.map { "\($0)" }.joined()
        #expect(rules.contains("10.250.0.1/32") && rules.contains("4000"), "\(rules)")
        #expect(
            text.contains("SO_EGRESS_ALLOW") && text.contains("api.anthropic.com") && text.contains("10.250.0.1/32"))
        #expect(text.contains("ANTHROPIC_BASE_URL") && text.contains("http://10.250.0.1:4000"))
        // Without the variable nothing of it is allowed, and Bedrock's host only with its switch.
        let plain = try WorkspaceHarness()
        try await plain.up(
            "pl", config: ["GIT_REPO=https://github.com/acme/web", "CLAUDE_CODE_USE_BEDROCK=1", "AWS_REGION=eu-west-1"])
        let plainText = plain.cluster.all.filter { $0.0.namespace == "pl" }.map { "\($0.1)" }.joined()
        #expect(!plainText.contains("10.250.0.1") && plainText.contains("bedrock-runtime.eu-west-1.amazonaws.com"))
        #expect(!text.contains("bedrock-runtime"))
    }

    @Test func aSpecExtendsTheStacksTableAndATaskInTheSpecWins() throws {
        let stack = [
            AgentProfile(
                name: "claude", task: "claude -p \"$TASK\"", secretEnv: ["ANTHROPIC_API_KEY"],
                egress: ["api.anthropic.com"])
        ]
        let text = """
            stack: agent-workspace
            deploy-to: k8s-kind
            secret-env: [GITHUB_TOKEN]
            egress: [github.com]
            agents:
              mine:
                task: mine run "$TASK"
                secret-env: [MINE_KEY]
                egress: [api.mine.example]
            workspace:
              service: agent
              agent: mine
            """
        let root = try #require(try YAMLFile.parse(text, file: "spec.yml"))
        var spec = try AgentTable.resolve(
            try Spec.decode(root, text: text, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
        #expect(
            spec.workspace?.task == "mine run \"$TASK\"" && spec.secretEnv == ["GITHUB_TOKEN", "MINE_KEY"]
                && spec.sections.egress?.entries == ["github.com", "api.mine.example"])
        let withTask = text + "\n  task: my own"
        let root2 = try #require(try YAMLFile.parse(withTask, file: "spec.yml"))
        spec = try AgentTable.resolve(
            try Spec.decode(root2, text: withTask, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
        #expect(spec.workspace?.task == "my own")
        let unknown = text.replacingOccurrences(of: "agent: mine", with: "agent: other")
        let root3 = try #require(try YAMLFile.parse(unknown, file: "spec.yml"))
        do {
            _ = try AgentTable.resolve(
                try Spec.decode(root3, text: unknown, path: "spec.yml", diagnostics: DiagnosticSink()), stack: stack)
            Issue.record("an unknown agent resolved")
        } catch let e as SoError {
            #expect(
                e.message == "unknown agent 'other'" && e.location?.line == 12
                    && e.hint?.contains("claude, mine") == true,
                "\(e.message) \(String(describing: e.location)) \(e.hint ?? "")")
        }
    }
}
