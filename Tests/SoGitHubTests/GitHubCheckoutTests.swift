import Foundation
import SoBasics
import SoTestSupport
import Testing

@testable import SoGitHub
@testable import SoWorkspace

/// A private repository (issue 64): the workspace holds no token to clone it with, so the loop checks it out with its
/// own and the workspace gets it as a git bundle; a public one is still cloned by the workspace from its URL.
@Suite struct GitHubCheckoutTests {
    typealias X = GitHubLoopExecutorTests

    /// The first calls of a pass over a label's delivery that says (or not) the repository is private.
    static func up(private isPrivate: Bool?) async throws -> [String] {
        var e = X.labeled("d1")
        e.repositoryPrivate = isPrivate
        let fake = X.Fake([e])
        _ = try await X.pass(fake)
        return await fake.calls.filter { $0.hasPrefix("up ") }
    }

    @Test func aPrivateRepositorysWorkspaceIsCarriedInAndAPublicOnesClonesItself() async throws {
        #expect(try await Self.up(private: true) == ["up \(X.ws) acme/web carried"])
        #expect(try await Self.up(private: false) == ["up \(X.ws) acme/web"])
        // GitHub always says; a delivery that did not is taken as before (the workspace clones from the URL).
        #expect(try await Self.up(private: nil) == ["up \(X.ws) acme/web"])
    }

    /// The loop's copy and checkout: every git call has the token in its environment only (a credential helper
    /// reads it), none on a command line, and the checkout's origin is the repository's URL as given.
    @Test func theLoopChecksOutWithItsTokenInTheEnvironmentOnly() async throws {
        let h = try Harness()
        var ctx = h.ctx
        ctx.environment["GITHUB_TOKEN"] = "loop-token-0123"
        let url = "https://github.com/acme/web"
        let home = ctx.soHome
        let bare = Path.join(home, "github-clone/acme+web.git")
        h.processes.expect(["git", "init", "-q", "--bare", bare])
        h.processes.expect([
            "git", "-C", bare, "fetch", "-q", "--prune", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
        ])
        h.processes.expect(
            ["git", "ls-remote", "--symref", url, "HEAD"], stdout: "ref: refs/heads/trunk\tHEAD\nabc\tHEAD\n")
        h.processes.fallback = { args in
            // The scratch directory's name is made at the call: the clone and the origin's name in it.
            if args.starts(with: ["git", "clone", "-q", "--shared", "--branch", "trunk", bare]),
                args.last?.hasSuffix("/repo") == true
            {
                return ProcessResult(exitCode: 0, stdout: "", stderr: "")
            }
            if args.count == 7, args[1] == "-C", args[3...] == ["remote", "set-url", "origin", url][...] {
                return ProcessResult(exitCode: 0, stdout: "", stderr: "")
            }
            return nil
        }
        let checkout = GitHubCheckout(ctx: ctx, environment: GitHubLoopLive.pushEnvironment(ctx))
        let dir = try await checkout.make("Acme/Web", url: url, ref: nil)
        #expect(h.processes.unexpected.isEmpty && h.processes.pending.isEmpty, "\(h.processes.unexpected)")
        #expect(h.processes.calls.count == 5)
        #expect(Path.dirname(dir) == Path.join(home, "github-clone") && h.fs.isDirectory(dir))
        #expect(!h.processes.calls.contains { $0.arguments.joined(separator: " ").contains("loop-token") })
        for env in h.processes.environments {
            #expect(env?["SO_GITHUB_PUSH_TOKEN"] == "loop-token-0123" && env?["GIT_TERMINAL_PROMPT"] == "0")
        }
        checkout.done(dir)
        #expect(!h.fs.exists(dir), "the scratch checkout is removed")
    }

    /// A named GIT_REF is checked out as it is (the remote is not asked for its default branch); a fetch the remote
    /// refuses is an error naming the repository, with no scratch directory left.
    @Test func aNamedRefAndARefusal() async throws {
        let h = try Harness()
        let url = "https://github.com/acme/web"
        let bare = Path.join(h.ctx.soHome, "github-clone/acme+web.git")
        h.processes.expect(["git", "init", "-q", "--bare", bare])
        h.processes.expect(
            [
                "git", "-C", bare, "fetch", "-q", "--prune", url, "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
            ], exitCode: 128, stderr: "fatal: Authentication failed for 'https://github.com/acme/web/'")
        let checkout = GitHubCheckout(ctx: h.ctx, environment: [:])
        let e = await #expect(throws: SoError.self) { try await checkout.make("acme/web", url: url, ref: "dev") }
        #expect(
            e?.message
                == "fetching acme/web with the loop's token failed: fatal: Authentication failed for 'https://github.com/acme/web/'"
        )
        #expect((try? h.fs.list(Path.join(h.ctx.soHome, "github-clone"))) == [], "no scratch checkout left")
    }

    /// The workspace starts from the loop's checkout: no GIT_REPO (the clone waits for the bundle), the rest as set.
    @Test func theUpStartsFromTheCheckoutWithoutGitRepo() {
        var req = UpRequest(stack: "agent-workspace")
        req.config = ["GIT_REPO=https://github.com/acme/web", "GIT_REF=dev", "AGENT_IMAGE=x"]
        let r = GitHubLoopLive.carried(req, from: "/h/github-clone/.so-checkout.1.abc/repo")
        #expect(r.config == ["GIT_REF=dev", "AGENT_IMAGE=x"] && r.from == "/h/github-clone/.so-checkout.1.abc/repo")
        let config = GitHubLoopConfig(repositories: ["acme/web"], label: "so", stack: "s")
        #expect(GitHubLoopLive.setting("GIT_REF", config) == nil)
        var named = config
        named.config = ["GIT_REF=", "GIT_REF=dev"]
        #expect(GitHubLoopLive.setting("GIT_REF", named) == "dev")
    }
}
