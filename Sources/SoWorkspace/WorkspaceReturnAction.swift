import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

/// Work coming back into the local repository in one step: `apply` (into the working tree, uncommitted),
/// `merge` (the branch into the current branch), `log`; and the choice `so down` asks for.
public struct WorkspaceReturnAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func log(_ directory: String, cluster: ClusterOptions) async throws -> WorkspaceLog {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let s = try await w.state()
        if let problem = s.problem {
            throw SoError(
                "no commits to show in \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent")
        }
        let logScript =
            #"cd "$1" && if [ -n "$2" ]; then git log --format='%H%x09%an%x09%aI%x09%s' "$2..HEAD"; "#
            + #"else git log --format='%H%x09%an%x09%aI%x09%s' HEAD; fi"#
        let r = try await w.run("reading the commits", logScript, [s.base])
        let commits = r.stdout.split(separator: "\n").compactMap { line -> WorkspaceCommit? in
            let f = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            return f.count == 4 ? WorkspaceCommit(commit: f[0], author: f[1], date: f[2], subject: f[3]) : nil
        }
        return WorkspaceLog(branch: s.branch, base: s.base, commits: commits, uncommitted: s.uncommitted)
    }

    /// Writes what the workspace changed since it started (its commits and its working tree, new files
    /// included; what was carried in from here is not written again) into the local working tree,
    /// uncommitted. `git apply` is all or nothing: a change that does not fit leaves the tree untouched.
    public func apply(_ directory: String, cluster: ClusterOptions, into: String?) async throws -> ApplyResult {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        _ = try w.requireRunning()
        let local = try await LocalRepository.find(ctx, into: into)
        let s = try await w.state()
        if let problem = s.problem {
            throw SoError(
                "nothing to apply from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent")
        }
        if s.ahead == 0 && s.uncommitted.isEmpty {
            let saved =
                s.uncommittedSaved ? " (its uncommitted changes are what was carried in or already applied)" : ""
            ctx.say("\(w.name) changed nothing since its start\(saved); nothing to apply")
            return ApplyResult(repository: local.repository, files: [], commits: 0, uncommitted: false)
        }
        return try await TakenWork.take(w, s, into: local, snapshot: true).use { taken in try await apply(w, s, taken) }
    }

    func apply(_ w: WorkspaceContainer, _ s: WorkspaceState, _ taken: TakenWork) async throws -> ApplyResult {
        let local = taken.local
        let patch = Path.join(taken.scratch, "work.patch")
        guard let snapshotRef = taken.snapshotRef else {
            throw SoError(
                "\(w.name)'s work was taken without a snapshot of its uncommitted changes", hint: "this is a bug in so")
        }
        let diff = try await taken.git(["diff", "--binary", "--output=\(patch)", taken.startRef, snapshotRef])
        guard diff.exitCode == 0 else {
            throw SoError(
                "diffing \(w.name)'s work failed: \(diff.lastErrorLine)",
                hint: "see it in the workspace: so deployment --dir \(w.c.model.directory) diff")
        }
        let size: UInt64
        do {
            size = try ctx.fs.size(patch)
        } catch {
            ctx.diagnostics.warn(
                "cannot read \(w.name)'s patch \(patch): \(SoContext.oneLine(error)); taken as no changes",
                hint: "see the work in the workspace: so deployment --dir \(w.c.model.directory) diff")
            size = 0
        }
        var files: [String] = []
        if size > 0 {
            let stat = try await taken.git(["apply", "--numstat", patch])
            files = stat.stdout.split(separator: "\n").compactMap {
                $0.split(separator: "\t", maxSplits: 2).last.map(String.init)
            }
            let applied = try await taken.git(["apply", "--whitespace=nowarn", patch])
            guard applied.exitCode == 0 else {
                throw SoError(
                    "\(w.name)'s changes do not apply to \(local.repository): \(applied.lastErrorLine)",
                    hint: "commit or stash your own changes to those files first, "
                        + "or take the work as a branch: so deployment --dir \(w.c.model.directory) merge")
            }
        }
        // The workspace counts what was applied as saved.
        try await w.run("recording the apply", #"cd "$1" && git update-ref refs/so/taken refs/so/out"#)
        return ApplyResult(
            repository: local.repository, files: files, commits: s.ahead, uncommitted: !s.uncommitted.isEmpty)
    }

    /// Brings the workspace's branch into the local repository as `agent/NAME` (or `localBranch`) and
    /// merges it into the current branch. Uncommitted work in the workspace is not part of the branch.
    public func merge(_ directory: String, cluster: ClusterOptions, into: String?, localBranch: String? = nil)
        async throws -> MergeResult
    {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        _ = try w.requireRunning()
        return try await merge(w, into: into, localBranch: localBranch, state: nil)
    }

    func merge(_ w: WorkspaceContainer, into: String?, localBranch: String?, state: WorkspaceState?) async throws
        -> MergeResult
    {
        let local = try await LocalRepository.find(ctx, into: into)
        let s: WorkspaceState
        if let state { s = state } else { s = try await w.state() }
        if let problem = s.problem {
            throw SoError(
                "nothing to merge from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent")
        }
        let current = try await ctx.processes.run(
            ["git", "-C", local.repository, "symbolic-ref", "-q", "--short", "HEAD"], workingDirectory: nil,
            environment: nil, timeout: 30)
        let into = current.exitCode == 0 ? current.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "HEAD"
        let branch = localBranch ?? s.branch
        guard into != branch else {
            throw SoError(
                "\(local.repository) has \(branch) checked out, the branch the work arrives on",
                hint: "check out the branch to merge into first")
        }
        if s.ahead == 0 {
            if !s.uncommitted.isEmpty { warnUncommitted(w, s) }
            return MergeResult(
                repository: local.repository, branch: branch, into: into, commit: "", commits: 0, merged: false)
        }
        return try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in
            try await taken.moveBranch(branch, to: s.head)
            return try await merge(w, s, taken, branch: branch, into: into)
        }
    }

    func merge(_ w: WorkspaceContainer, _ s: WorkspaceState, _ taken: TakenWork, branch: String, into: String)
        async throws -> MergeResult
    {
        let local = taken.local
        let merged = try await taken.git(
            ["merge", "--no-edit", "-m", "Merge \(branch) (so workspace \(w.name))", branch], timeout: nil)
        guard merged.exitCode == 0 else {
            throw SoError(
                "merging \(branch) into \(into) in \(local.repository) stopped: \(merged.lastErrorLine)",
                hint: merged.stdout.contains("CONFLICT")
                    ? "resolve the conflicts and commit (git merge --continue), or git merge --abort"
                    : "commit or stash your local changes first, then merge again")
        }
        try await w.run("recording the merge", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
        if !s.uncommitted.isEmpty { warnUncommitted(w, s) }
        let head = try await taken.git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return MergeResult(
            repository: local.repository, branch: branch, into: into, commit: head, commits: s.ahead, merged: true)
    }

    func warnUncommitted(_ w: WorkspaceContainer, _ s: WorkspaceState) {
        let changes = s.uncommitted.count == 1 ? " in \(w.name) is" : "s in \(w.name) are"
        ctx.diagnostics.warn(
            "\(s.uncommitted.count) uncommitted change\(changes) not on the branch",
            hint:
                "take them with: so deployment --dir \(w.c.model.directory) apply (or commit them there: push -m MESSAGE)"
        )
    }

    /// `so down --keep|--merge`: what the workspace left uncommitted is committed there, then its branch
    /// comes into the local repository (and, with merge, into the current branch). Nothing when it holds no work.
    func endWith(_ choice: DownChoice, _ w: WorkspaceContainer, into: String?) async throws {
        var s = try await w.state()
        if let problem = s.problem {
            ctx.verbose("\(w.name): \(problem); nothing to take")
            return
        }
        if !s.uncommitted.isEmpty {
            try await w.run(
                "committing what is left",
                """
                cd "$1" && [ -n "$(git status --porcelain)" ] || exit 0
                git add -A && git commit -q -m "$2"
                """, ["so down --\(choice.rawValue): what \(w.name) left uncommitted"])
            s = try await w.state()
        }
        guard s.ahead > 0 else {
            ctx.say("\(w.name) holds no commits since its start; nothing to \(choice.rawValue)")
            return
        }
        switch choice {
        case .keep:
            let local = try await LocalRepository.find(ctx, into: into)
            try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in
                try await taken.moveBranch(s.branch, to: s.head)
            }
            try await w.run("recording the keep", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
            ctx.say(
                "kept \(s.branch) (\(s.head.prefix(12)), \(s.ahead) \(English.plural("commit", s.ahead))) in \(local.repository)"
            )
        case .merge:
            let m = try await merge(w, into: into, localBranch: nil, state: s)
            ctx.say(
                "merged \(m.branch) (\(s.ahead) \(English.plural("commit", s.ahead))) into \(m.into) in \(m.repository)"
            )
        case .discard:
            break
        }
    }
}
