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

    /// One stack through init, create, start and stop: nil where it was not created, else the first error line of a
    /// start the API refused ("" when it started).
    static func tryStack(_ stack: String) async throws -> String? {
        let t = try TempDir("so-e2e-corpus")
        defer { t.cleanup() }
        var r = try await E2E.so(["--stack", stack, "deploy", "init", "--output", "spec.yml"], cwd: t.path)
        guard r.exitCode == 0 else { return nil }
        r = try await E2E.so(["deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd: t.path)
        guard r.exitCode == 0 else { return nil }
        r = try await E2E.so(
            ["deployment", "--dir", "dep", "start", "--no-wait", "--skip-cluster-management"] + RealNode.kc,
            cwd: t.path)
        let refused =
            r.exitCode == 0
            ? "" : "\(Path.basename(stack)): \(r.stderr.split(separator: "\n").first { $0.hasPrefix("error: ") } ?? "")"
        _ = try await E2E.so(
            ["deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace", "--timeout", "60"]
                + RealNode.kc, cwd: t.path)
        return refused
    }

    /// Three stacks at a time (each its own deployment and Namespace): one after another, the 25 took 814 s, the
    /// main tier's longest suite (2026-11-29), and each waits mostly on the API: a start, a stop, a Namespace's end.
    @Test func everyStackThatIsCreatedAlsoStarts() async throws {
        let stacks = Self.stacks()
        #expect(stacks.count >= 6, "\(stacks)")
        var outcomes: [String?] = []
        try await withThrowingTaskGroup(of: String?.self) { group in
            var next = stacks.makeIterator()
            for _ in 0..<3 { if let s = next.next() { group.addTask { try await Self.tryStack(s) } } }
            for try await outcome in group {
                outcomes.append(outcome)
                if let s = next.next() { group.addTask { try await Self.tryStack(s) } }
            }
        }
        let created = outcomes.compactMap { $0 }
        let refused = created.filter { !$0.isEmpty }
        print(
            "corpus at the API: \(stacks.count) stacks, \(created.count) created, \(created.count - refused.count) started"
        )
        #expect(!created.isEmpty)
        #expect(refused.isEmpty, "created \(created.count); refused:\n\(refused.sorted().joined(separator: "\n"))")
    }
}
