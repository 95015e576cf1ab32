import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// Work leaving a workspace: push its branch to origin, fetch it into a local clone, show it as a diff.
public struct WorkspaceGitAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func state(_ directory: String, cluster: ClusterOptions) async throws -> WorkspaceState {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        _ = try w.requireRunning()
        return try await w.state()
    }

    /// Pushes the workspace's branch to its origin (git's token from the workspace's Secret); with a
    /// message, what is not committed is committed first.
    public func push(_ directory: String, cluster: ClusterOptions, message: String?) async throws -> PushResult {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        return try await push(w, message: message)
    }

    /// `known`: the checkout's state when the caller just read it and nothing was committed since.
    func push(_ w: WorkspaceContainer, message: String?, known: WorkspaceState? = nil) async throws -> PushResult {
        var committed = false
        if let message, !message.isEmpty {
            let r = try await w.run(
                "committing the changes",
                """
                cd "$1" && [ -n "$(git status --porcelain)" ] || exit 0
                git add -A && git commit -q -m "$2" && echo committed
                """, [message])
            committed = r.stdout.contains("committed")
        }
        let s: WorkspaceState
        if let known, !committed { s = known } else { s = try await w.state() }
        if let problem = s.problem {
            throw SoError(
                "nothing to push from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone")
        }
        guard !s.origin.isEmpty else {
            throw SoError(
                "\(w.name)'s checkout has no origin to push to",
                hint:
                    "its GIT_REPO was empty; fetch the work into a clone instead: so deployment --dir \(w.c.model.directory) fetch"
            )
        }
        guard s.branch != "HEAD" else {
            throw SoError(
                "\(w.name)'s checkout is not on a branch (detached HEAD)",
                hint: "check out a branch in the workspace: so deployment --dir \(w.c.model.directory) shell")
        }
        try await w.run("pushing \(s.branch)", #"cd "$1" && git push -q origin "HEAD:refs/heads/$2" 2>&1"#, [s.branch])
        if !s.uncommitted.isEmpty {
            ctx.diagnostics.warn(
                "\(s.uncommitted.count) uncommitted change\(s.uncommitted.count == 1 ? " was" : "s were") not pushed",
                hint: "commit them with the push: so deployment --dir \(w.c.model.directory) push -m MESSAGE")
        }
        return PushResult(
            branch: s.branch, commit: s.head, origin: s.origin, commits: s.ahead, committed: committed,
            uncommitted: s.uncommitted.count)
    }

    /// Brings the workspace's branch into a local clone (`into`, else the repository the current directory
    /// is in) as a branch of the same name, through a git bundle — origin is not needed, as Clave merges a
    /// worktree. The workspace then counts those commits as saved.
    public func fetch(_ directory: String, cluster: ClusterOptions, into: String?, localBranch: String?, force: Bool)
        async throws -> WorkspaceFetchResult
    {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let local = try await LocalRepository.find(ctx, into: into)
        let s = try await w.state()
        if let problem = s.problem {
            throw SoError(
                "nothing to fetch from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone")
        }
        guard s.branch != "HEAD" else {
            throw SoError(
                "\(w.name)'s checkout is not on a branch (detached HEAD)",
                hint: "check out a branch in the workspace first")
        }
        let branch = localBranch ?? s.branch
        // Streamed out of the container into a file (TakenWork), never held in memory.
        try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in
            try await taken.moveBranch(branch, to: s.head, force: force)
        }
        try await w.run("recording the fetch", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
        if !s.uncommitted.isEmpty {
            ctx.diagnostics.warn(
                "\(s.uncommitted.count) uncommitted change\(s.uncommitted.count == 1 ? " was" : "s were") not fetched",
                hint: "take them with 'so deployment --dir \(w.c.model.directory) apply', "
                    + "or commit them first (push -m MESSAGE commits and pushes)")
        }
        return WorkspaceFetchResult(repository: local.repository, branch: branch, commit: s.head, commits: s.ahead)
    }

    /// The workspace's branch taken out through a git bundle (through the API server, as `fetch` does) into
    /// `mirror`, a bare repository on this machine (made on first use), and pushed from there to `url` as
    /// `refs/heads/REF` with `environment` (the pusher's credentials: the workspace holds none), never forced; the
    /// workspace then counts those commits as saved (`refs/so/fetched`). `leftovers`: changes left uncommitted are
    /// first committed in the workspace with that message. The commit pushed, or nil when the branch has nothing
    /// past its start.
    package func pushOut(
        _ w: WorkspaceContainer, mirror: String, url: String, to ref: String, environment: [String: String],
        leftovers: String? = nil
    ) async throws -> String? {
        if let message = leftovers {
            try await w.run(
                "committing what \(w.name) left uncommitted",
                #"cd "$1" && if [ -n "$(git status --porcelain)" ]; then git add -A && git commit -q -m "$2"; fi"#,
                [message])
        }
        let s = try await w.state()
        if let problem = s.problem {
            throw SoError(
                "nothing to push from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone")
        }
        guard s.ahead > 0 else { return nil }
        if !ctx.fs.isDirectory(mirror) {
            let made = try await ctx.processes.run(
                ["git", "init", "-q", "--bare", mirror], workingDirectory: nil, environment: nil, timeout: 60)
            guard made.exitCode == 0 else {
                throw SoError("making \(mirror) failed: \(made.lastErrorLine)", hint: "check that it can be written")
            }
        }
        let local = LocalRepository(repository: mirror, commonDir: mirror)
        return try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in
            let pushed = try await ctx.processes.run(
                ["git", "-C", mirror, "push", "-q", url, "\(taken.branchRef):refs/heads/\(ref)"], workingDirectory: nil,
                environment: environment, timeout: 600)
            guard pushed.exitCode == 0 else {
                throw SoError(
                    "pushing \(w.name)'s work to \(ref) failed: \(pushed.lastErrorLine)",
                    hint: "see the branch in the workspace: so deployment --dir \(w.c.model.directory) shell")
            }
            try await w.run("recording the push", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
            return s.head
        }
    }

    /// The workspace's changes against the commit it started from: commits and uncommitted changes,
    /// new files included (through a scratch index; the workspace's own index is not touched), as a
    /// patch `git apply` takes.
    public func diff(_ directory: String, cluster: ClusterOptions, stat: Bool) async throws -> (
        state: WorkspaceState, patch: String
    ) {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let s = try await w.state()
        if let problem = s.problem {
            throw SoError(
                "no changes to show in \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone")
        }
        let r = try await w.run(
            "diffing against \(s.base.isEmpty ? "the first commit" : String(s.base.prefix(12)))",
            """
            cd "$1" || exit 3
            idx="$(git rev-parse --git-dir)/so-diff-index"
            cp "$(git rev-parse --git-path index)" "$idx" 2>/dev/null || rm -f "$idx"
            GIT_INDEX_FILE="$idx" git add -A && GIT_INDEX_FILE="$idx" git diff --cached --binary $3 "$2"; rc=$?
            rm -f "$idx"; exit $rc
            """, [s.base.isEmpty ? "4b825dc642cb6eb9a060e54bf8d69288fbee4904" : s.base, stat ? "--stat" : ""])
        return (s, r.stdout)
    }
}
