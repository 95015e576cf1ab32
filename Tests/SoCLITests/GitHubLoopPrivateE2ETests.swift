import Foundation
import SoBasics
import SoGitHub
import SoTestSupport
import Testing

/// Issue 64 on a private repository: the workspace holds no GitHub token, so it cannot clone one; the loop clones it
/// with its own token and carries the checkout in as a git bundle. The stand-in serves the repository over smart HTTP
/// on the node's address (the workspace could reach it) and, as GitHub does for a private repository, refuses a clone
/// or fetch without a token it takes. Then the merge removes the workspace.
extension GitHubLoopE2ETests {
    @Test func onAPrivateRepositoryTheLoopClonesItAndTheWorkspaceHoldsNoToken() async throws {
        let t = try TempDir("so-e2e-github-private")
        defer { t.cleanup() }
        let run = Run(t)
        try await AgentE2E.buildImage()
        let stack = try AgentE2E.lightStack(in: t)
        _ = try await AgentE2E.bareRepository(in: t, path: run.repo)
        try t.write("secret", Self.secret + "\n")
        run.github = try GitHubStandInServer.start(
            in: t, repo: run.repo, gitDir: run.bare, token: Self.token, secretFile: t.file("secret"),
            listen: AgentE2E.nodeAddress, isPrivate: true)
        let gitURL = "\(run.github.url)/git/\(run.repo).git"
        try t.write("loop.yml", run.loopFile(stack: stack, gitURL: gitURL, budget: "tasks: 5"))
        run.env = [
            "SO_KUBECONFIG": E2E.kubeconfig!, "SO_HOME": t.file("home"), "GITHUB_TOKEN": Self.token,
            "GITHUB_API_URL": run.github.url,
        ]
        do {
            // Without a token the repository cannot be read, as GitHub answers for a private one.
            let anonymous = try await AgentE2E.run(
                ["git", "ls-remote", gitURL], env: ["GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false"])
            #expect(anonymous.exitCode != 0, "an anonymous read of the private repository: \(anonymous.stdout)")
            try await run.startReceiver()
            let (issue, pull) = try await Self.labelToPullRequest(run)
            #expect(issue > 0 && pull > 0)
            // The workspace started from the loop's checkout: its origin is the repository's URL, with no token.
            let origin = try await run.so([
                "deployment", "--name", run.workspace, "exec", "agent", "--", "git", "-C", "/workspace", "remote",
                "get-url", "origin",
            ])
            #expect(origin.stdout == "\(gitURL)\n", "\(origin.stdout)\n\(origin.stderr)")
            let said = try await run.pass()
            #expect(!said.contains("failed"), "\(said)")
            // Every read the git endpoint served carried the loop's token (the loop's own fetches); the anonymous
            // ones were refused; the loop's copy is under SO_HOME.
            let git = try run.github.requests().filter { $0["git"] != nil }
            let reads = git.filter { $0["git"] as? String == "git-upload-pack" }
            #expect(reads.contains { $0["status"] as? Int == 200 }, "the loop read the repository")
            let served = reads.filter { $0["status"] as? Int == 200 }.allSatisfy {
                $0["password"] as? String == Self.token
            }
            #expect(served, "a read was served without the token")
            #expect(
                FileManager.default.fileExists(atPath: t.file("home/github-clone/\(run.owner)+app.git/HEAD")),
                "the loop's copy of the repository")
            try await Self.noTokenInThePod(run, of: [Self.token], work: "Say hello in AGENT_TASKS.md.")
            // The merge removes the workspace (its work was pushed: nothing is kept elsewhere).
            let (_, closed) = try await run.github.send("close", ["number": pull, "merged": true])
            #expect(closed.map(\.status) == [202])
            let removed = try await run.pass()
            #expect(removed.contains(": remove \(run.workspace) (pull request merged)"), "\(removed)")
            #expect(try await run.namespaceGone(), "the namespace \(run.workspace) is gone")
        } catch {
            await run.cleanUp()
            throw error
        }
        await run.cleanUp()
    }
}
