import Foundation
import SoActions
import SoBasics

/// A private repository's checkout the loop makes with its own token, for `so up --from` to carry into a workspace
/// as a git bundle (`GIT_CARRY=bundle`): the workspace, which holds no token, could not clone it. The repository is
/// fetched into a bare copy the loop keeps per repository (`SO_HOME/github-clone/OWNER+NAME.git`, fetched again at
/// each start: only what is new comes), then checked out into a scratch directory beside it that borrows its
/// objects (`git clone --shared`), its `origin` set to the repository's URL as given (never a token: git gets it
/// from a credential helper that reads it from the environment, `GitHubLoopLive.pushEnvironment`). The scratch is
/// removed once `up` carried it in (`done`).
struct GitHubCheckout: Sendable {
    let ctx: SoContext
    /// The loop's git environment: its token for a credential helper, no prompt.
    let environment: [String: String]

    /// Where the loop keeps its copies.
    var root: String { Path.join(ctx.soHome, "github-clone") }

    /// The bare copy of `repository` (OWNER/NAME), one path component.
    func cache(_ repository: String) -> String {
        Path.join(root, repository.lowercased().replacingOccurrences(of: "/", with: "+") + ".git")
    }

    /// A checkout of `url` (`repository`'s) at `ref` (nil: its default branch) on a branch of that name, in a scratch
    /// directory of its own: its path.
    func make(_ repository: String, url: String, ref: String?) async throws -> String {
        let bare = cache(repository)
        if !ctx.fs.isDirectory(bare) {
            try ctx.fs.createDirectory(root)
            try await git(["init", "-q", "--bare", bare], what: "making the loop's copy of \(repository)")
        }
        // The remote's branches, as they are now (a branch removed there goes here too), and its default branch.
        try await git(
            ["-C", bare, "fetch", "-q", "--prune", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
            what: "fetching \(repository) with the loop's token")
        var branch = ref
        if branch == nil {
            let head = try await git(
                ["ls-remote", "--symref", url, "HEAD"], what: "asking \(repository)'s default branch")
            // ref: refs/heads/trunk<TAB>HEAD
            branch =
                head.split(separator: "\n").lazy.compactMap { line -> String? in
                    guard line.hasPrefix("ref: refs/heads/"), line.hasSuffix("\tHEAD") else { return nil }
                    return String(line.dropFirst("ref: refs/heads/".count).dropLast("\tHEAD".count))
                }.first
        }
        guard let branch else {
            throw SoError(
                "\(repository) names no default branch (git ls-remote --symref answered none)",
                hint: "name the branch to start from in the loop's config: GIT_REF=BRANCH")
        }
        let dir = try ctx.fs.temporaryDirectory(beside: Path.join(root, "checkout"), prefix: "so-checkout")
        do {
            try await git(
                ["clone", "-q", "--shared", "--branch", branch, bare, Path.join(dir, "repo")],
                what: "checking out \(repository) at \(branch)")
            try await git(
                ["-C", Path.join(dir, "repo"), "remote", "set-url", "origin", url],
                what: "naming \(repository)'s origin")
        } catch {
            done(dir)
            throw error
        }
        return dir
    }

    /// The checkout in the scratch directory `make` returned.
    static func checkout(_ dir: String) -> String { Path.join(dir, "repo") }

    /// Best effort: a scratch directory left beside the copies is harmless, and the start goes on.
    func done(_ dir: String) { try? ctx.fs.removeOwnedTree(dir, owner: .scratch(prefix: "so-checkout")) }

    @discardableResult
    func git(_ args: [String], what: String) async throws -> String {
        let r = try await ctx.processes.run(
            ["git"] + args, workingDirectory: nil, environment: environment, timeout: 600)
        guard r.exitCode == 0 else {
            throw SoError(
                "\(what) failed: \(r.lastErrorLine)",
                hint: "the loop's token must read the repository (contents: read); its copies are in \(root)")
        }
        return r.stdout
    }
}
