import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The corpus at the API: every stack `so` can create must also start — the API server, not the schema,
/// is the judge. Each stack of ../shared/fixtures (laconic stacks, real compose projects) and of
/// Tests/SoCLITests/E2EStacks goes through `deploy init`, `deploy create` and `start --no-wait` against
/// SO_E2E_KUBECONFIG, then is removed. Skipped without an API server.
@Suite(.serialized, .enabled(if: E2E.kubeconfig != nil, "SO_E2E_KUBECONFIG is not set: no real API server"))
struct CorpusE2ETests {
    static func stacks() -> [String] {
        let fs = LocalFileSystem()
        var out: [String] = []
        let laconic = Path.join(RepoPaths.laconicStacks, "stacks")
        for name in (try? fs.list(laconic)) ?? [] where fs.isFile(Path.join(laconic, name, "stack.yml")) {
            out.append(Path.join(laconic, name))
        }
        for name in (try? fs.list(RepoPaths.composeReal)) ?? []
        where fs.isDirectory(Path.join(RepoPaths.composeReal, name)) {
            out.append(Path.join(RepoPaths.composeReal, name))
        }
        for name in (try? fs.list(RealNode.stacks)) ?? [] where fs.isDirectory(Path.join(RealNode.stacks, name)) {
            out.append(Path.join(RealNode.stacks, name))
        }
        return out
    }

    @Test func everyStackThatIsCreatedAlsoStarts() async throws {
        let stacks = Self.stacks()
        #expect(stacks.count >= 6, "\(stacks)")
        var created = 0
        var started = 0
        var refused: [String] = []
        for stack in stacks {
            let t = try TempDir("so-e2e-corpus")
            defer { t.cleanup() }
            let name = Path.basename(stack)
            var r = try await E2E.so(["--stack", stack, "deploy", "init", "--output", "spec.yml"], cwd: t.path)
            guard r.exitCode == 0 else { continue }
            r = try await E2E.so(
                ["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
            guard r.exitCode == 0 else { continue }
            created += 1
            r = try await E2E.so(
                ["deployment", "--dir", "dep", "start", "--no-wait", "--skip-cluster-management"] + RealNode.kc,
                cwd: t.path)
            if r.exitCode == 0 {
                started += 1
            } else {
                refused.append("\(name): \(r.stderr.split(separator: "\n").first { $0.hasPrefix("error: ") } ?? "")")
            }
            _ = try await E2E.so(
                ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace", "--timeout", "60"]
                    + RealNode.kc, cwd: t.path)
        }
        print("corpus at the API: \(stacks.count) stacks, \(created) created, \(started) started")
        #expect(created > 0)
        #expect(
            started == created, "created \(created), started \(started); refused:\n\(refused.joined(separator: "\n"))")
    }
}
