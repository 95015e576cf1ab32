import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// A checkout on this machine carried into a workspace as a git bundle over the Kubernetes API (`kubectl
/// exec -i`, the bundle streamed from a file): no registry, shared volume or remote the cluster can reach.
/// The checkout is only read: new objects (the snapshot of uncommitted changes) and the refs the bundle
/// needs live in a scratch repository beside its `.git` that borrows its objects, removed at the end.
struct CarryIn: Sendable {
    let ctx: SoContext
    /// The checkout's top directory and git directory shared by its worktrees.
    let repository: String
    let commonDir: String
    /// HEAD's commit as the checkout was found; nil: it has none yet.
    var head: String? = nil

    /// The checkout `directory` is in, with HEAD's commit (one git process: a claim waits for it); nil when it is in
    /// none.
    static func find(_ ctx: SoContext, directory: String) async throws -> CarryIn? {
        let r = try await ctx.processes.run(
            [
                "git", "-C", directory, "rev-parse", "--show-toplevel", "--git-common-dir", "--verify", "-q",
                "HEAD^{commit}",
            ],
            workingDirectory: nil, environment: nil, timeout: 30)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // A checkout with no commit yet: its two directories, and --verify's quiet failure (exit 1).
        guard (r.exitCode == 0 && lines.count == 3) || (r.exitCode == 1 && lines.count == 2) else { return nil }
        return CarryIn(
            ctx: ctx, repository: lines[0],
            commonDir: Path.absolute(
                lines[1], relativeTo: Path.absolute(directory, relativeTo: ctx.fs.currentDirectory)),
            head: lines.count == 3 ? lines[2] : nil)
    }

    func git(_ args: [String], env extra: [String: String] = [:], what: String) async throws -> String {
        var env: [String: String]? = nil
        if !extra.isEmpty {
            var e = ctx.environment
            for (k, v) in extra { e[k] = v }
            env = e
        }
        let r = try await ctx.processes.run(
            ["git", "-C", repository] + args, workingDirectory: nil, environment: env, timeout: nil)
        guard r.exitCode == 0 else {
            throw SoError(
                "\(what) in \(repository) failed: \(r.lastErrorLine)",
                hint: "run 'git -C \(repository) \(args.joined(separator: " "))' to see why")
        }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What would be carried (nothing is written), HEAD's history not counted (0 commits, 0 local), and whether the
    /// checkout has a remote named origin at all (a local path included): what a claim waits for. Counting it is
    /// `counting`, for the lines printed at the end (`rev-list --count`: 120-230 ms for 30,000 commits without a
    /// commit-graph, on a claim's path before).
    func inspectUncounted(includeUncommitted: Bool) async throws -> (source: WorkspaceSource, hasOrigin: Bool) {
        guard let base = head else {
            throw SoError(
                "the repository \(repository) has no commit yet",
                hint: "commit something first, or start from a remote: --config GIT_REPO=URL")
        }
        // Read at once (a claim waits for these): each is a git process of its own.
        // A detached HEAD has no branch: symbolic-ref -q exits 1 and says nothing (not an error here).
        async let branchRead = git(["symbolic-ref", "-q", "--short", "HEAD"], what: "reading the branch")
        async let subjectRead = git(["log", "-1", "--format=%s", base], what: "reading HEAD")
        // No remote named origin is a fine checkout: get-url fails, and there is no origin to carry.
        async let originRead = git(["remote", "get-url", "origin"], what: "reading origin")
        async let statusRead = git(["status", "--porcelain=v1"], what: "reading the changes")
        // No branch (detached HEAD): none.
        let branch = (try? await branchRead) ?? ""
        // No origin: none to carry.
        let originURL = (try? await originRead) ?? ""
        let subject = try await subjectRead
        let origin = WorkspaceSource.carriedOrigin(originURL)
        let status = try await statusRead
        let uncommitted = status.split(separator: "\n").count
        let source = WorkspaceSource(
            repository: repository, branch: branch, base: base, subject: subject, origin: origin ?? "",
            commits: 0, localCommits: 0,
            uncommitted: uncommitted, uncommittedCarried: includeUncommitted && uncommitted > 0,
            note: originURL.isEmpty || origin != nil
                ? nil : "the checkout's origin is a local path the cluster cannot reach; push and pull request need one"
        )
        return (source, !originURL.isEmpty)
    }

    /// HEAD's history counted, started at once: its commits from `base`, and those no origin branch holds (all of
    /// them without an origin); 0 for a count git could not make.
    func counting(base: String, hasOrigin: Bool) -> Task<(commits: Int, local: Int), Never> {
        let carry = self
        let local = ["rev-list", "--count", base, "--not", "--remotes=origin"]
        return Task {
            // A count git cannot make is 0: it is only printed, and what was carried is said beside it.
            async let commitsRead = try? carry.git(["rev-list", "--count", base], what: "counting commits")
            // The same.
            async let localRead = hasOrigin ? try? carry.git(local, what: "counting local commits") : nil
            let commits = (await commitsRead).flatMap { Int($0) } ?? 0
            return (commits, hasOrigin ? (await localRead).flatMap { Int($0) } ?? 0 : commits)
        }
    }

    /// A scratch bare repository beside the checkout's git directory, borrowing its objects; removed by `done`.
    struct Bundle: Sendable {
        let scratch: String
        let file: String
        let base: String
        /// The commit holding the working tree's changes (parent: base), when they were carried.
        let seed: String?
        let bytes: UInt64
    }

    /// Writes the bundle (HEAD's history, and with `includeUncommitted` a snapshot commit of the working
    /// tree, untracked files included, ignored ones not) to a file; git streams it there. `after`: a commit the
    /// receiving repository has (a warm pool member's fetch of the same origin), whose history is left out (a thin
    /// bundle: a claim in a large checkout carries its new commits, not its whole history); asked meanwhile, and
    /// awaited only as the bundle is written.
    func bundle(_ source: WorkspaceSource, workspace: String, after: Task<String?, Never>? = nil) async throws
        -> Bundle
    {
        let scratch = try ctx.fs.temporaryDirectory(beside: Path.join(commonDir, "so-carry"), prefix: "so-carry")
        do {
            let bare = Path.join(scratch, "repo.git")
            _ = try await git(["init", "-q", "--bare", "--template=", bare], what: "making a scratch repository")
            try ctx.fs.writeText(Path.join(commonDir, "objects") + "\n", to: Path.join(bare, "objects/info/alternates"))
            // Objects made here (the snapshot) go to the scratch repository; the checkout's are read.
            let objects = [
                "GIT_OBJECT_DIRECTORY": Path.join(bare, "objects"),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": Path.join(commonDir, "objects"),
            ]
            var seed: String?
            if source.uncommittedCarried {
                let index = ["GIT_INDEX_FILE": Path.join(scratch, "index")].merging(objects) { a, _ in a }
                _ = try await git(["read-tree", source.base], env: index, what: "reading HEAD into a scratch index")
                _ = try await git(["add", "-A", "."], env: index, what: "snapshotting the working tree")
                let tree = try await git(["write-tree"], env: index, what: "snapshotting the working tree")
                let identity = [
                    "GIT_AUTHOR_NAME": "so", "GIT_AUTHOR_EMAIL": "so@so.invalid", "GIT_COMMITTER_NAME": "so",
                    "GIT_COMMITTER_EMAIL": "so@so.invalid",
                ]
                seed = try await git(
                    [
                        "commit-tree", tree, "-p", source.base, "-m",
                        "so: uncommitted changes of \(repository) carried into \(workspace)",
                    ],
                    env: objects.merging(identity) { a, _ in a }, what: "snapshotting the working tree")
            }
            let inBare = { (args: [String]) in ["--git-dir", bare] + args }
            _ = try await git(inBare(["update-ref", "refs/so/carry/head", source.base]), what: "preparing the bundle")
            var refs = ["refs/so/carry/head"]
            if let seed {
                _ = try await git(inBare(["update-ref", "refs/so/carry/seed", seed]), what: "preparing the bundle")
                refs.append("refs/so/carry/seed")
            }
            let file = Path.join(scratch, "repo.bundle")
            let leftOut = await after?.value
            _ = try await git(
                inBare(["bundle", "create", "-q", file] + refs + (leftOut.map { ["--not", $0] } ?? [])),
                what: "bundling HEAD's history")
            // The size is only shown ("a git bundle of N MB"); git just wrote the file.
            return Bundle(
                scratch: scratch, file: file, base: source.base, seed: seed, bytes: (try? ctx.fs.size(file)) ?? 0)
        } catch {
            // best effort: the error being thrown says more
            try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-carry"))
            throw error
        }
    }

    /// A commit whose history a claim's bundle may leave out, where the member's warm-up fetched `warmURL` (the
    /// pool's origin) and it is this checkout's origin (`source.origin`): the checkout's `origin/HEAD` as it last
    /// fetched it (the member's fetch is usually later, and holds it), or its parent when HEAD is that very commit (a
    /// bundle must hold one commit at least). Nil: a full bundle (no origin/HEAD here, another origin, a root commit).
    func thinAfter(_ source: WorkspaceSource, warmURL: String?) async -> String? {
        guard !source.origin.isEmpty, warmURL == source.origin else { return nil }
        // One git process: origin/HEAD and its first parent. Best effort: no origin/HEAD here (never fetched, or set up
        // by hand) means a full bundle.
        guard
            let two = try? await git(
                ["log", "-2", "--first-parent", "--format=%H", "refs/remotes/origin/HEAD", "--"], what: "")
        else { return nil }
        let commits = two.split(separator: "\n").map(String.init)
        guard let tip = commits.first else { return nil }
        // A root commit has no parent, and is carried whole.
        return tip != source.base ? tip : commits.dropFirst().first
    }

    /// Best effort: a scratch directory left in the temporary root is harmless, and the carry already succeeded.
    func done(_ b: Bundle) { try? ctx.fs.removeOwnedTree(b.scratch, owner: .scratch(prefix: "so-carry")) }
}
