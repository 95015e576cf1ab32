import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoStack

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
        try await ctx.processes.run(
            ["git", "-C", local.repository] + args, workingDirectory: nil, environment: nil, timeout: timeout)
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
            throw SoError(
                "\(local.repository) has \(branch) checked out, the branch \(name)'s work arrives on",
                hint: "check out another branch there first")
        }
        let existing = try await git(["rev-parse", "-q", "--verify", "refs/heads/\(branch)"], timeout: 30)
        if existing.exitCode == 0 {
            let old = existing.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if !force, old != head,
                try await git(["merge-base", "--is-ancestor", old, head], timeout: 60).exitCode != 0
            {
                throw SoError(
                    "\(branch) in \(local.repository) has commits the workspace \(name) does not",
                    hint:
                        "bring the work in under another name (so deployment fetch --branch OTHER), or replace the branch (fetch --force)"
                )
            }
        }
        let r = try await git(["update-ref", "-m", "so: \(name)'s work", "refs/heads/\(branch)", head], timeout: 30)
        guard r.exitCode == 0 else {
            throw SoError(
                "updating \(branch) in \(local.repository) failed: \(r.lastErrorLine)",
                hint: "check the repository with git status")
        }
    }

    func done() async {
        for ref in [branchRef, snapshotRef, startRef].compactMap({ $0 }) where ref.hasPrefix("refs/so/take/") {
            // best effort: refs/so/take/* are overwritten by the next take
            _ = try? await git(["update-ref", "-d", ref])
        }
        // best effort: a scratch dir in the temp dir
        try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-take"))
    }

    /// Bundles the branch (and, with `snapshot`, a commit of the working tree on top of HEAD) in the
    /// container, streams it out and fetches it into `local`.
    static func take(_ w: WorkspaceContainer, _ s: WorkspaceState, into local: LocalRepository, snapshot: Bool)
        async throws -> TakenWork
    {
        let ctx = w.ctx
        let streaming = ctx.processes
        guard s.branch != "HEAD" else {
            throw SoError(
                "\(w.name)'s checkout is not on a branch (detached HEAD)",
                hint: "check out a branch in the workspace first: so deployment --dir \(w.c.model.directory) shell")
        }
        // A thin bundle (what came after the base) when this repository has the base; else the whole history.
        var prerequisite = s.base
        if !prerequisite.isEmpty {
            let has = try await ctx.processes.run(
                ["git", "-C", local.repository, "cat-file", "-e", s.base + "^{commit}"], workingDirectory: nil,
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
            let r = try await streaming.runStreaming(
                try w.command(script, [s.branch, prerequisite, snapshot ? "1" : "", w.name]), stdinFile: nil,
                stdoutFile: file, environment: nil, timeout: nil)
            // A bundle that cannot be read counts as empty: the error below says bundling failed.
            guard r.exitCode == 0, (try? ctx.fs.size(file)) ?? 0 > 0 else {
                throw SoError(
                    "bundling \(s.branch) in \(w.name) failed: \(r.lastErrorLine)",
                    hint: "see the branch in the workspace: so deployment --dir \(w.c.model.directory) shell")
            }
            let prefix = "refs/so/take/\(w.name)"
            // A branch with no commits since the base is not in a thin bundle (the base is here already).
            let withBranch = s.ahead > 0 || prerequisite.isEmpty
            var specs = withBranch ? ["+refs/heads/\(s.branch):\(prefix)/branch"] : []
            if snapshot { specs.append("+refs/so/out:\(prefix)/snapshot") }
            if !s.seed.isEmpty { specs.append("+refs/so/carry/seed:\(prefix)/seed") }
            let fetched = try await ctx.processes.run(
                ["git", "-C", local.repository, "fetch", "-q", file] + specs, workingDirectory: nil, environment: nil,
                timeout: nil)
            guard fetched.exitCode == 0 else {
                throw SoError(
                    "git fetch of \(w.name)'s work into \(local.repository) failed: \(fetched.lastErrorLine)",
                    hint: "is \(local.repository) a checkout of the workspace's repository? pass --into DIR")
            }
            return TakenWork(
                local: local, scratch: scratch, state: s, branchRef: withBranch ? "\(prefix)/branch" : s.base,
                snapshotRef: snapshot ? "\(prefix)/snapshot" : nil,
                startRef: s.seed.isEmpty ? s.base : "\(prefix)/seed", ctx: ctx, name: w.name)
        } catch {
            // best effort: the error thrown next matters
            try? ctx.fs.removeOwnedTree(scratch, owner: .scratch(prefix: "so-take"))
            throw error
        }
    }
}
