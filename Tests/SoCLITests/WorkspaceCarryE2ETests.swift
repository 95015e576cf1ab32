import Foundation
import SoBasics
import SoSystem
import SoTestSupport
import Testing

/// The local loop on a node that runs containers: a repository with no remote at all (a commit never
/// pushed anywhere, a file never committed) goes into a workspace as a bundle over the API, the stand-in
/// agent commits there, and the work comes back: applied into the working tree, merged from a second
/// workspace, kept as a branch at down — and down without a choice, with no terminal, refuses.
@Suite(
    .serialized,
    RealNode.required
)
struct WorkspaceCarryE2ETests {
    @Test func aLocalOnlyRepositoryGoesInAndItsWorkComesBack() async throws {
        let t = try TempDir("so-e2e-carry")
        defer { t.cleanup() }
        try await AgentE2E.buildImage()
        let env = ["SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home")]
        let proj = t.file("proj")
        func git(_ args: [String], in dir: String? = nil) async throws -> String {
            let r = try await AgentE2E.run(["git", "-C", dir ?? proj] + args, env: AgentE2E.gitEnv)
            #expect(r.exitCode == 0, "git \(args): \(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try await AgentE2E.run(["git", "init", "-q", "-b", "main", proj], env: AgentE2E.gitEnv)
        try t.write("proj/README.md", "hello\n")
        _ = try await git(["add", "-A"])
        _ = try await git(["commit", "-q", "-m", "first"])
        try t.write("proj/local.txt", "never pushed\n")
        _ = try await git(["add", "-A"])
        _ = try await git(["commit", "-q", "-m", "local only"])
        try t.write("proj/draft.txt", "not committed\n")
        let head = try await git(["rev-parse", "HEAD"])
        let (ws1, ws2) = ("e2e-carry", "e2e-carry-2")
        func so(_ args: [String]) async throws -> ProcessResult { try await E2E.so(args, cwd: proj, env: env) }
        func inWorkspace(_ ws: String, _ script: String) async throws -> String {
            let r = try await so(["deployment", "--name", ws, "exec", "agent", "--", "sh", "-c", script])
            #expect(r.exitCode == 0, "\(script): \(r.stdout)\(r.stderr)")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let up = [
            "--config", "AGENT_IMAGE=\(AgentE2E.image)", "--config", "GIT_USER_NAME=E2E Agent", "--config",
            "GIT_USER_EMAIL=agent@e2e.invalid",
            "--timeout", "180", "--progress", "plain",
        ]
        let began = Date()
        try await AgentE2E.removing(ws2, t, env) {
            try await AgentE2E.removing(ws1, t, env) {
                // so up inside the checkout: no GIT_REPO, no remote, nothing the cluster could clone.
                var r = try await so(["up", "agent-workspace", "--name", ws1, "--include-uncommitted"] + up)
                #expect(r.exitCode == 0 && r.stdout.contains("\(ws1) is ready"), "\(r.stdout)\n\(r.stderr)")
                #expect(
                    r.stdout.contains(
                        "workspace source: \(LocalFileSystem().realpath(proj)) (branch main at \(head.prefix(12)) \"local only\")"
                    )
                        && r.stdout.contains("2 commits of history") && r.stdout.contains("1 uncommitted change")
                        && r.stdout.contains("over the Kubernetes API")
                        && r.stdout.contains("origin: none"), "\(r.stdout)")
                #expect(
                    try await inWorkspace(
                        ws1,
                        "git rev-parse --abbrev-ref HEAD; git rev-parse HEAD; git log --format=%s | tr '\\n' ,; cat draft.txt; git status --porcelain"
                    )
                        == "agent/\(ws1)\n\(head)\nlocal only,first,not committed\n?? draft.txt")

                // The agent (the stand-in claude, the default agent's command) commits; task commits what is left (the
                // carried-in draft.txt); apply brings the workspace's own changes into the working tree, uncommitted.
                r = try await so(["deployment", "--name", ws1, "task", "--no-push", "add a greeting"])
                #expect(r.exitCode == 0 && r.stdout.contains("fake agent: committed"), "\(r.stdout)\n\(r.stderr)")
                r = try await so(["deployment", "--name", ws1, "log", "-o", "json"])
                let log = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
                #expect(
                    (log?["commits"] as? [[String: Any]])?.map { $0["subject"] as? String } == [
                        "so task: add a greeting", "agent: add a greeting",
                    ], "\(r.stdout)\n\(r.stderr)")
                r = try await so(["deployment", "--name", ws1, "apply"])
                #expect(r.exitCode == 0 && r.stdout.contains("applied 1 file"), "\(r.stdout)\n\(r.stderr)")
                #expect(try t.read("proj/AGENT_TASKS.md") == "add a greeting\n")
                #expect(try await git(["status", "--porcelain"]) == "?? AGENT_TASKS.md\n?? draft.txt")
                #expect(try await git(["rev-parse", "HEAD"]) == head, "apply commits nothing")

                // A second workspace (without the uncommitted file), merged into main.
                r = try await so(["up", "agent-workspace", "--name", ws2] + up)
                #expect(
                    r.exitCode == 0 && r.stdout.contains("not the 2 uncommitted changes"), "\(r.stdout)\n\(r.stderr)")
                _ = try await inWorkspace(
                    ws2,
                    "test ! -e draft.txt && echo second > second.txt && git add second.txt && git commit -qm 'agent: second'"
                )
                r = try await so(["deployment", "--name", ws2, "merge"])
                #expect(
                    r.exitCode == 0 && r.stdout.contains("merged agent/\(ws2) (1 commit) into main"),
                    "\(r.stdout)\n\(r.stderr)")
                #expect(try await git(["log", "--format=%s", "main"]) == "agent: second\nlocal only\nfirst")
                #expect(try t.read("proj/second.txt") == "second\n")
                r = try await so(["down", ws2])
                #expect(r.exitCode == 0, "merged work is saved: \(r.stdout)\n\(r.stderr)")

                // More work in the first: down without a choice, with no terminal, refuses; --keep leaves the branch.
                _ = try await inWorkspace(
                    ws1, "echo more > more.txt && git add more.txt && git commit -qm 'agent: more'")
                r = try await so(["down", ws1])
                #expect(
                    r.exitCode == 1 && r.stderr.contains("1 commit on agent/\(ws1) not pushed")
                        && r.stderr.contains("so down \(ws1) --keep"), "\(r.stdout)\n\(r.stderr)")
                r = try await so(["down", ws1, "--keep"])
                #expect(r.exitCode == 0 && r.stdout.contains("kept agent/\(ws1)"), "\(r.stdout)\n\(r.stderr)")
                #expect(
                    try await git(["log", "--format=%s", "agent/\(ws1)"])
                        == "agent: more\nso task: add a greeting\nagent: add a greeting\nlocal only\nfirst")
                #expect(try await git(["rev-parse", "--abbrev-ref", "HEAD"]) == "main")
            }
        }
        print(
            "carry e2e: \(String(format: "%.1f", Date().timeIntervalSince(began))) s from the first up to the last down"
        )
    }
}
