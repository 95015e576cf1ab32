import Foundation
import SoBasics
import SoKube
import SoStack

public struct WorkspaceCommit: Sendable, Equatable, Encodable {
    public var commit: String
    public var author: String
    public var date: String
    public var subject: String
}

/// `so deployment log`: the workspace's commits since it started, newest first, and what is not committed.
public struct WorkspaceLog: Sendable, Encodable {
    public var branch: String
    public var base: String
    public var commits: [WorkspaceCommit]
    public var uncommitted: [String]
}

/// `so deployment apply`: the workspace's changes written into a local working tree, uncommitted.
public struct ApplyResult: Sendable, Encodable {
    public var repository: String
    /// Changed files, as `git apply --numstat` names them.
    public var files: [String]
    /// The workspace's commits and whether uncommitted changes were among what was applied.
    public var commits: Int
    public var uncommitted: Bool
}

/// `so deployment merge` (and `so down --merge`): the workspace's branch merged into the current branch.
public struct MergeResult: Sendable, Encodable {
    public var repository: String
    /// The local branch the work arrived on (agent/NAME), and the branch it was merged into.
    public var branch: String
    public var into: String
    public var commit: String
    public var commits: Int
    public var merged: Bool
}

/// How `so down` ends a workspace that holds work: leave its branch in the local repository, merge it, or throw it away.
public enum DownChoice: String, Sendable, CaseIterable {
    case keep, merge, discard
}

/// A local repository that work comes back into: `--into DIR`, else the checkout the current directory is in.
struct LocalRepository {
    let repository: String
    let commonDir: String

    static func find(_ ctx: SoContext, into: String?) async throws -> LocalRepository {
        let start = into.map(ctx.absolute) ?? ctx.fs.currentDirectory
        guard let c = try await CarryIn.find(ctx, directory: start) else {
            throw SoError("\(start) is not in a git repository", hint: "run it in your checkout of the workspace's repository, or pass --into DIR")
        }
        return LocalRepository(repository: c.repository, commonDir: c.commonDir)
    }
}

/// The workspace's work brought into a local repository through a git bundle streamed out of the container
/// (`kubectl exec`, its stdout written to a file: never in memory). Refs it fetched under
/// `refs/so/take/NAME/` are removed again by `done`.
struct TakenWork {
    let local: LocalRepository
    let scratch: String
    let state: WorkspaceState
    /// Local refs: the workspace's branch, the snapshot of its working tree (== branch when clean), the start (seed or base).
    let branchRef: String
    let snapshotRef: String?
    let startRef: String
    let ctx: SoContext
    let name: String

    func git(_ args: [String], timeout: Double? = 300) async throws -> ProcessResult {
        try await ctx.processes.run(["git", "-C", local.repository] + args, workingDirectory: nil, environment: nil, timeout: timeout)
    }

    /// Runs `body`, then removes the scratch directory and the refs fetched, whether it passed or threw.
    func use<T>(_ body: (TakenWork) async throws -> T) async throws -> T {
        do {
            let v = try await body(self)
            await done()
            return v
        } catch {
            await done()
            throw error
        }
    }

    /// Points the local branch at the workspace's head, only forward: a branch holding commits the workspace
    /// does not have is refused (`--branch` names another).
    func moveBranch(_ branch: String, to head: String, force: Bool = false) async throws {
        let current = try await git(["symbolic-ref", "-q", "HEAD"], timeout: 30)
        if current.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "refs/heads/\(branch)" {
            throw SoError("\(local.repository) has \(branch) checked out, the branch \(name)'s work arrives on", hint: "check out another branch there first")
        }
        let existing = try await git(["rev-parse", "-q", "--verify", "refs/heads/\(branch)"], timeout: 30)
        if existing.exitCode == 0 {
            let old = existing.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if !force, old != head, try await git(["merge-base", "--is-ancestor", old, head], timeout: 60).exitCode != 0 {
                throw SoError("\(branch) in \(local.repository) has commits the workspace \(name) does not",
                              hint: "bring the work in under another name (so deployment fetch --branch OTHER), or replace the branch (fetch --force)")
            }
        }
        let r = try await git(["update-ref", "-m", "so: \(name)'s work", "refs/heads/\(branch)", head], timeout: 30)
        guard r.exitCode == 0 else { throw SoError("updating \(branch) in \(local.repository) failed: \(r.lastErrorLine)",
                hint: "check the repository with git status") }
    }

    func done() async {
        for ref in [branchRef, snapshotRef, startRef].compactMap({ $0 }) where ref.hasPrefix("refs/so/take/") {
            _ = try? await git(["update-ref", "-d", ref])  // best effort: refs/so/take/* are overwritten by the next take
        }
        try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-take"))  // best effort: a scratch dir in the temp dir
    }

    /// Bundles the branch (and, with `snapshot`, a commit of the working tree on top of HEAD) in the
    /// container, streams it out and fetches it into `local`.
    static func take(_ w: WorkspaceContainer, _ s: WorkspaceState, into local: LocalRepository, snapshot: Bool) async throws -> TakenWork {
        let ctx = w.ctx
        let streaming = ctx.processes
        guard s.branch != "HEAD" else { throw SoError("\(w.name)'s checkout is not on a branch (detached HEAD)",
                hint: "check out a branch in the workspace first: so deployment --dir \(w.c.model.directory) shell") }
        // A thin bundle (what came after the base) when this repository has the base; else the whole history.
        var prerequisite = s.base
        if !prerequisite.isEmpty {
            let has = try await ctx.processes.run(["git", "-C", local.repository, "cat-file", "-e", s.base + "^{commit}"], workingDirectory: nil,
                    environment: nil, timeout: 30)
            if has.exitCode != 0 { prerequisite = "" }
        }
        let scratch = try ctx.fs.temporaryDirectory(beside: Path.join(local.commonDir, "so-take"), prefix: "so-take")
        let file = Path.join(scratch, "work.bundle")
        let script = """
        cd "$1" || exit 3
        g="$(git rev-parse --git-dir)"
        branch=$2 prereq=$3 snap=$4 ws=$5
        refs="refs/heads/$branch"
        if [ -n "$snap" ]; then
          idx="$g/so-out-index"
          cp "$(git rev-parse --git-path index)" "$idx" 2>/dev/null || rm -f "$idx"
          tree=$(GIT_INDEX_FILE="$idx" git add -A && GIT_INDEX_FILE="$idx" git write-tree) || { rm -f "$idx"; exit 5; }
          rm -f "$idx"
          if [ "$tree" = "$(git rev-parse 'HEAD^{tree}')" ]; then s=$(git rev-parse HEAD); \
        else s=$(git commit-tree "$tree" -p HEAD -m "so: uncommitted work in $ws") || exit 6; fi
          git update-ref refs/so/out "$s" && refs="$refs refs/so/out"
        fi
        git rev-parse -q --verify refs/so/carry/seed >/dev/null && refs="$refs refs/so/carry/seed"
        f="$g/so-out.bundle"
        if [ -n "$prereq" ]; then git bundle create -q "$f" $refs "^$prereq" >&2; else git bundle create -q "$f" $refs >&2; fi || { rm -f "$f"; exit 4; }
        cat "$f"; rc=$?; rm -f "$f"; exit $rc
        """
        do {
            let r = try await streaming.runStreaming(try w.command(script, [s.branch, prerequisite, snapshot ? "1" : "", w.name]), stdinFile: nil,
                    stdoutFile: file, environment: nil, timeout: nil)
            // A bundle that cannot be read counts as empty: the error below says bundling failed.
            guard r.exitCode == 0, (try? ctx.fs.size(file)) ?? 0 > 0 else {
                throw SoError("bundling \(s.branch) in \(w.name) failed: \(r.lastErrorLine)",
                        hint: "see the branch in the workspace: so deployment --dir \(w.c.model.directory) shell")
            }
            let prefix = "refs/so/take/\(w.name)"
            // A branch with no commits since the base is not in a thin bundle (the base is here already).
            let withBranch = s.ahead > 0 || prerequisite.isEmpty
            var specs = withBranch ? ["+refs/heads/\(s.branch):\(prefix)/branch"] : []
            if snapshot { specs.append("+refs/so/out:\(prefix)/snapshot") }
            if !s.seed.isEmpty { specs.append("+refs/so/carry/seed:\(prefix)/seed") }
            let fetched = try await ctx.processes.run(["git", "-C", local.repository, "fetch", "-q", file] + specs, workingDirectory: nil, environment: nil,
                    timeout: nil)
            guard fetched.exitCode == 0 else {
                throw SoError("git fetch of \(w.name)'s work into \(local.repository) failed: \(fetched.lastErrorLine)",
                        hint: "is \(local.repository) a checkout of the workspace's repository? pass --into DIR")
            }
            return TakenWork(local: local, scratch: scratch, state: s, branchRef: withBranch ? "\(prefix)/branch" : s.base,
                    snapshotRef: snapshot ? "\(prefix)/snapshot" : nil,
                             startRef: s.seed.isEmpty ? s.base : "\(prefix)/seed", ctx: ctx, name: w.name)
        } catch {
            try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-take"))  // best effort: the error thrown next matters
            throw error
        }
    }
}

/// Work coming back into the local repository in one step: `apply` (into the working tree, uncommitted),
/// `merge` (the branch into the current branch), `log`; and the choice `so down` asks for.
public struct WorkspaceReturnAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func log(_ directory: String, cluster: ClusterOptions) async throws -> WorkspaceLog {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let s = try await w.state()
        if let problem = s.problem { throw SoError("no commits to show in \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent") }
        let logScript = #"cd "$1" && if [ -n "$2" ]; then git log --format='%H%x09%an%x09%aI%x09%s' "$2..HEAD"; "#
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
        if let problem = s.problem { throw SoError("nothing to apply from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent") }
        if s.ahead == 0 && s.uncommitted.isEmpty {
            let saved = s.uncommittedSaved ? " (its uncommitted changes are what was carried in or already applied)" : ""
            ctx.say("\(w.name) changed nothing since its start\(saved); nothing to apply")
            return ApplyResult(repository: local.repository, files: [], commits: 0, uncommitted: false)
        }
        return try await TakenWork.take(w, s, into: local, snapshot: true).use { taken in try await apply(w, s, taken) }
    }

    func apply(_ w: WorkspaceContainer, _ s: WorkspaceState, _ taken: TakenWork) async throws -> ApplyResult {
        let local = taken.local
        let patch = Path.join(taken.scratch, "work.patch")
        guard let snapshotRef = taken.snapshotRef else {
            throw SoError("\(w.name)'s work was taken without a snapshot of its uncommitted changes", hint: "this is a bug in so")
        }
        let diff = try await taken.git(["diff", "--binary", "--output=\(patch)", taken.startRef, snapshotRef])
        guard diff.exitCode == 0 else { throw SoError("diffing \(w.name)'s work failed: \(diff.lastErrorLine)",
                hint: "see it in the workspace: so deployment --dir \(w.c.model.directory) diff") }
        let size: UInt64
        do {
            size = try ctx.fs.size(patch)
        } catch {
            ctx.diagnostics.warn("cannot read \(w.name)'s patch \(patch): \(SoContext.oneLine(error)); taken as no changes",
                                 hint: "see the work in the workspace: so deployment --dir \(w.c.model.directory) diff")
            size = 0
        }
        var files: [String] = []
        if size > 0 {
            let stat = try await taken.git(["apply", "--numstat", patch])
            files = stat.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t", maxSplits: 2).last.map(String.init) }
            let applied = try await taken.git(["apply", "--whitespace=nowarn", patch])
            guard applied.exitCode == 0 else {
                throw SoError("\(w.name)'s changes do not apply to \(local.repository): \(applied.lastErrorLine)",
                              hint: "commit or stash your own changes to those files first, "
                                  + "or take the work as a branch: so deployment --dir \(w.c.model.directory) merge")
            }
        }
        // The workspace counts what was applied as saved.
        try await w.run("recording the apply", #"cd "$1" && git update-ref refs/so/taken refs/so/out"#)
        return ApplyResult(repository: local.repository, files: files, commits: s.ahead, uncommitted: !s.uncommitted.isEmpty)
    }

    /// Brings the workspace's branch into the local repository as `agent/NAME` (or `localBranch`) and
    /// merges it into the current branch. Uncommitted work in the workspace is not part of the branch.
    public func merge(_ directory: String, cluster: ClusterOptions, into: String?, localBranch: String? = nil) async throws -> MergeResult {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        _ = try w.requireRunning()
        return try await merge(w, into: into, localBranch: localBranch, state: nil)
    }

    func merge(_ w: WorkspaceContainer, into: String?, localBranch: String?, state: WorkspaceState?) async throws -> MergeResult {
        let local = try await LocalRepository.find(ctx, into: into)
        let s: WorkspaceState
        if let state { s = state } else { s = try await w.state() }
        if let problem = s.problem { throw SoError("nothing to merge from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs agent") }
        let current = try await ctx.processes.run(["git", "-C", local.repository, "symbolic-ref", "-q", "--short", "HEAD"], workingDirectory: nil,
                environment: nil, timeout: 30)
        let into = current.exitCode == 0 ? current.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "HEAD"
        let branch = localBranch ?? s.branch
        guard into != branch else {
            throw SoError("\(local.repository) has \(branch) checked out, the branch the work arrives on", hint: "check out the branch to merge into first")
        }
        if s.ahead == 0 {
            if !s.uncommitted.isEmpty { warnUncommitted(w, s) }
            return MergeResult(repository: local.repository, branch: branch, into: into, commit: "", commits: 0, merged: false)
        }
        return try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in
            try await taken.moveBranch(branch, to: s.head)
            return try await merge(w, s, taken, branch: branch, into: into)
        }
    }

    func merge(_ w: WorkspaceContainer, _ s: WorkspaceState, _ taken: TakenWork, branch: String, into: String) async throws -> MergeResult {
        let local = taken.local
        let merged = try await taken.git(["merge", "--no-edit", "-m", "Merge \(branch) (so workspace \(w.name))", branch], timeout: nil)
        guard merged.exitCode == 0 else {
            throw SoError("merging \(branch) into \(into) in \(local.repository) stopped: \(merged.lastErrorLine)",
                          hint: merged.stdout.contains("CONFLICT")
                              ? "resolve the conflicts and commit (git merge --continue), or git merge --abort"
                              : "commit or stash your local changes first, then merge again")
        }
        try await w.run("recording the merge", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
        if !s.uncommitted.isEmpty { warnUncommitted(w, s) }
        let head = try await taken.git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return MergeResult(repository: local.repository, branch: branch, into: into, commit: head, commits: s.ahead, merged: true)
    }

    func warnUncommitted(_ w: WorkspaceContainer, _ s: WorkspaceState) {
        let changes = s.uncommitted.count == 1 ? " in \(w.name) is" : "s in \(w.name) are"
        ctx.diagnostics.warn("\(s.uncommitted.count) uncommitted change\(changes) not on the branch",
                             hint: "take them with: so deployment --dir \(w.c.model.directory) apply (or commit them there: push -m MESSAGE)")
    }

    /// `so down --keep|--merge`: what the workspace left uncommitted is committed there, then its branch
    /// comes into the local repository (and, with merge, into the current branch). Nothing when it holds no work.
    func endWith(_ choice: DownChoice, _ w: WorkspaceContainer, into: String?) async throws {
        var s = try await w.state()
        if let problem = s.problem { ctx.verbose("\(w.name): \(problem); nothing to take"); return }
        if !s.uncommitted.isEmpty {
            try await w.run("committing what is left", """
            cd "$1" && [ -n "$(git status --porcelain)" ] || exit 0
            git add -A && git commit -q -m "$2"
            """, ["so down --\(choice.rawValue): what \(w.name) left uncommitted"])
            s = try await w.state()
        }
        guard s.ahead > 0 else { ctx.say("\(w.name) holds no commits since its start; nothing to \(choice.rawValue)"); return }
        switch choice {
        case .keep:
            let local = try await LocalRepository.find(ctx, into: into)
            try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in try await taken.moveBranch(s.branch, to: s.head) }
            try await w.run("recording the keep", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
            ctx.say("kept \(s.branch) (\(s.head.prefix(12)), \(s.ahead) \(English.plural("commit", s.ahead))) in \(local.repository)")
        case .merge:
            let m = try await merge(w, into: into, localBranch: nil, state: s)
            ctx.say("merged \(m.branch) (\(s.ahead) \(English.plural("commit", s.ahead))) into \(m.into) in \(m.repository)")
        case .discard:
            break
        }
    }
}
