import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// A workspace's checkout as git sees it in the container (read in one `kubectl exec`).
public struct WorkspaceState: Sendable, Equatable, Encodable {
    public var branch = ""
    public var head = ""
    /// The commit the work started from (`so.base`, recorded by the clone) and the branch it came from (`so.ref`).
    public var base = ""
    public var ref = ""
    public var origin = ""
    /// Commits since `base`.
    public var ahead = 0
    /// Commits that neither origin nor a `so deployment fetch` holds (`abc1234 subject`): lost with the volume.
    public var unsaved: [String] = []
    /// `git status --porcelain` lines: changes not committed (untracked files included), when they are
    /// neither what was carried in from a local checkout nor what `apply` already took out.
    public var uncommitted: [String] = []
    /// The working tree's changes are exactly what was carried in (`so.seed`) or taken out (`apply`): not lost with the volume.
    public var uncommittedSaved = false
    /// The snapshot of uncommitted changes carried in from a local checkout (`so.seed`), if any.
    public var seed = ""
    /// Why there is nothing to read (no checkout at the path), else nil.
    public var problem: String?

    /// What `so down` would lose, in words; nil when nothing.
    public var losses: String? {
        var parts: [String] = []
        if !unsaved.isEmpty {
            let shown = "\(unsaved.prefix(3).joined(separator: "; "))\(unsaved.count > 3 ? "; …" : "")"
            parts.append("\(unsaved.count) \(English.plural("commit", unsaved.count)) on \(branch) not pushed (\(shown))")
        }
        if !uncommitted.isEmpty {
            let shown = "\(uncommitted.prefix(3).joined(separator: ", "))\(uncommitted.count > 3 ? ", …" : "")"
            parts.append("\(uncommitted.count) uncommitted \(English.plural("change", uncommitted.count)) (\(shown))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// Reads the `key=value` lines of `WorkspaceContainer.stateScript`.
    static func parse(_ text: String) -> WorkspaceState {
        var s = WorkspaceState()
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq], value = String(line[line.index(after: eq)...])
            switch key {
            case "branch": s.branch = value
            case "head": s.head = value
            case "base": s.base = value
            case "ref": s.ref = value
            case "origin": s.origin = value
            case "ahead": s.ahead = Int(value) ?? 0
            case "unsaved": s.unsaved.append(value)
            case "uncommitted": s.uncommitted.append(value.trimmedSpaces)
            case "saved": s.uncommittedSaved = value == "1"
            case "seed": s.seed = value
            case "problem": s.problem = value
            default: break
            }
        }
        return s
    }
}

extension SoContext {
    /// Whether the deployment in `dir` is a workspace (its spec has `workspace:`): only spec.yml is read.
    func isWorkspace(_ dir: String) -> Bool {
        let path = Path.join(dir, "spec.yml")
        guard fs.exists(path) else { return false }
        do {
            return try Spec.load(path, fs: fs, diagnostics: .dropped("the spec's warnings were given when the deployment was loaded"))
                .workspace != nil
        } catch {
            diagnostics.warn("cannot read \(path): \(Self.oneLine(error)); taken as no workspace", hint: "fix the spec, then run the command again")
            return false
        }
    }

    /// An error's message without its hint (for a warning that gives its own).
    static func oneLine(_ error: Error) -> String { (error as? SoError)?.message ?? "\(error)" }
}

/// What removing a workspace's volume (`so down`, `stop --delete-volumes`) would lose: a workspace (spec
/// `workspace:`) whose checkout holds commits neither pushed nor fetched, or uncommitted changes, is not
/// removed without `--discard`. One that is not running cannot be read, and is refused the same way.
struct WorkGuard {
    let ctx: SoContext
    let directory: String
    let cluster: ClusterOptions
    /// How the user names it on `so deployment` (`--name N`, `--dir D`).
    let address: String
    /// The command line that removes it anyway.
    let anyway: String

    /// The name in `--name N`, else the directory's last part.
    func name(_ address: String) -> String { Path.basename(address.hasPrefix("--name ") ? String(address.dropFirst(7)) : directory) }

    func check(discard: Bool, dryRun: Bool) async throws {
        guard ctx.isWorkspace(directory) else { return }
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        guard w.pod != nil else {
            if discard { return }
            if dryRun { ctx.console.out("would not check \(w.name) for unpushed work: its \(w.spec.service) container is not running"); return }
            throw SoError("cannot tell whether \(w.name) holds work that is not pushed: its \(w.spec.service) container is not running",
                          hint: "start it (so deployment \(address) start) and push, or '\(anyway)' to remove it with its volume")
        }
        let state = try await w.state()
        if let problem = state.problem { ctx.verbose("\(w.name): \(problem); nothing to check"); return }
        guard let losses = state.losses else { return }
        if discard {
            ctx.diagnostics.warn("\(w.name): discarding \(losses)")
        } else if dryRun {
            ctx.console.out("would refuse: \(w.name) holds \(losses) (--discard removes it anyway)")
        } else {
            throw SoError("\(w.name) holds work that would be lost: \(losses)",
                          hint: "take it first: so down \(name(address)) --keep (its branch into your repository) or --merge; "
                              + "or push it (so deployment \(address) push [-m MESSAGE]), "
                              + "fetch or apply it (so deployment \(address) fetch|apply); '\(anyway)' removes it anyway")
        }
    }
}

/// The container that holds a workspace's checkout (spec `workspace:`), reached with `kubectl exec`.
/// Scripts get their values as positional parameters (`sh -c SCRIPT so PATH ARGS…`): nothing is quoted
/// into a command line, and no secret is ever passed (git's token comes from the container's environment).
struct WorkspaceContainer {
    let ctx: SoContext
    let c: ConnectedDeployment
    let spec: WorkspaceSpec
    let name: String
    /// The running pod and its container; nil when none runs (a stopped workspace).
    let pod: String?
    let container: String

    static func open(_ ctx: SoContext, directory: String, cluster: ClusterOptions) async throws -> WorkspaceContainer {
        try await of(try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster))
    }

    /// The workspace of a deployment already opened: only its pods are read.
    static func of(_ c: ConnectedDeployment) async throws -> WorkspaceContainer {
        let ctx = c.ctx
        let name = Path.basename(c.model.directory)
        guard let spec = c.model.spec.workspace else {
            throw SoError("\(name) is not a workspace: its spec has no 'workspace:' section",
                          hint: "add 'workspace: {service: SERVICE, path: /workspace}' to \(Path.join(c.model.directory, "spec.yml")), "
                              + "or use 'so deployment exec'")
        }
        let container = NameRules.dnsLabel(spec.service)
        // The workspace's container runs in a Deployment's pod: its pods alone are listed (one request per look).
        let pods = try await c.client.list(.pod, namespace: c.namespace, labelSelector: DeploymentNames.selector(c.model.id))
        let running = pods.first { p in
            p.at("status", "phase")?.string == "Running" && p.at("metadata", "deletionTimestamp") == nil &&
                (p.at("status", "containerStatuses")?.array ?? []).contains { $0["name"]?.string == container && $0.at("state", "running") != nil }
        }
        return WorkspaceContainer(ctx: ctx, c: c, spec: spec, name: name, pod: running?.name, container: container)
    }

    func requireRunning() throws -> String {
        guard let pod else {
            throw SoError("\(name)'s \(spec.service) container is not running",
                    hint: "start the workspace first: so deployment --dir \(c.model.directory) start")
        }
        return pod
    }

    /// `kubectl exec` of `script` in the container (`sh -c script so PATH ARGS…`); `stdin` adds `-i` (the script reads standard input).
    func command(_ script: String, _ args: [String], stdin: Bool = false) throws -> [String] {
        ["kubectl"] + c.target.kubectlFlags + ["-n", c.namespace, "exec"] + (stdin ? ["-i"] : []) + [try requireRunning(), "-c", container, "--",
                "sh", "-c", script, "so", spec.path] + args
    }

    /// Runs a script in the container and captures its output; a non-zero exit is an error naming `what`.
    @discardableResult
    func run(_ what: String, _ script: String, _ args: [String] = [], allowFailure: Bool = false) async throws -> ProcessResult {
        let r = try await ctx.processes.run(try command(script, args), workingDirectory: nil, environment: nil, timeout: nil)
        if r.exitCode != 0 && !allowFailure {
            throw SoError("\(what) in \(name) failed: \(r.lastErrorLine)", hint: "see it for yourself: so deployment --dir \(c.model.directory) shell")
        }
        return r
    }

    /// The checkout's branch, commits and changes.
    func state() async throws -> WorkspaceState {
        let r = try await run("reading the checkout", Self.stateScript)
        return WorkspaceState.parse(r.stdout)
    }

    static let stateScript = """
    cd "$1" 2>/dev/null || { echo "problem=$1 does not exist in the container"; exit 0; }
    git rev-parse -q --verify HEAD >/dev/null 2>&1 || { echo "problem=$1 holds no git checkout with a commit"; exit 0; }
    echo "branch=$(git rev-parse --abbrev-ref HEAD)"
    echo "head=$(git rev-parse HEAD)"
    base=$(git config so.base || true)
    echo "base=$base"
    echo "ref=$(git config so.ref || true)"
    echo "origin=$(git remote get-url origin 2>/dev/null || true)"
    if [ -n "$base" ]; then echo "ahead=$(git rev-list --count "$base..HEAD")"; else echo "ahead=$(git rev-list --count HEAD)"; fi
    set -- --remotes=origin
    [ -n "$base" ] && set -- "$@" "$base"
    git rev-parse -q --verify refs/so/fetched >/dev/null && set -- "$@" refs/so/fetched
    git rev-parse -q --verify refs/so/taken >/dev/null && set -- "$@" refs/so/taken
    git log --format='unsaved=%h %s' HEAD --not "$@"
    seed=$(git config so.seed || true)
    echo "seed=$seed"
    changes=$(git status --porcelain=v1)
    [ -n "$changes" ] || exit 0
    # Changes equal to what was carried in, or to what apply took out, are not lost with the volume.
    idx="$(git rev-parse --git-dir)/so-state-index"
    cp "$(git rev-parse --git-path index)" "$idx" 2>/dev/null || rm -f "$idx"
    tree=$(GIT_INDEX_FILE="$idx" git add -A 2>/dev/null && GIT_INDEX_FILE="$idx" git write-tree 2>/dev/null)
    rm -f "$idx"
    for r in "$seed" refs/so/taken; do
      [ -n "$r" ] && [ -n "$tree" ] && [ "$(git rev-parse -q --verify "$r^{tree}" 2>/dev/null)" = "$tree" ] && { echo "saved=1"; exit 0; }
    done
    printf '%s\n' "$changes" | sed 's/^/uncommitted=/'
    """
}

public struct PushResult: Sendable, Encodable {
    public var branch: String
    public var commit: String
    public var origin: String
    public var commits: Int
    public var committed: Bool
    public var uncommitted: Int
}

public struct WorkspaceFetchResult: Sendable, Encodable {
    public var repository: String
    public var branch: String
    public var commit: String
    public var commits: Int
}

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
            let r = try await w.run("committing the changes", """
            cd "$1" && [ -n "$(git status --porcelain)" ] || exit 0
            git add -A && git commit -q -m "$2" && echo committed
            """, [message])
            committed = r.stdout.contains("committed")
        }
        let s: WorkspaceState
        if let known, !committed { s = known } else { s = try await w.state() }
        if let problem = s.problem { throw SoError("nothing to push from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone") }
        guard !s.origin.isEmpty else {
            throw SoError("\(w.name)'s checkout has no origin to push to",
                    hint: "its GIT_REPO was empty; fetch the work into a clone instead: so deployment --dir \(w.c.model.directory) fetch")
        }
        guard s.branch != "HEAD" else {
            throw SoError("\(w.name)'s checkout is not on a branch (detached HEAD)",
                    hint: "check out a branch in the workspace: so deployment --dir \(w.c.model.directory) shell")
        }
        try await w.run("pushing \(s.branch)", #"cd "$1" && git push -q origin "HEAD:refs/heads/$2" 2>&1"#, [s.branch])
        if !s.uncommitted.isEmpty {
            ctx.diagnostics.warn("\(s.uncommitted.count) uncommitted change\(s.uncommitted.count == 1 ? " was" : "s were") not pushed",
                                 hint: "commit them with the push: so deployment --dir \(w.c.model.directory) push -m MESSAGE")
        }
        return PushResult(branch: s.branch, commit: s.head, origin: s.origin, commits: s.ahead, committed: committed, uncommitted: s.uncommitted.count)
    }

    /// Brings the workspace's branch into a local clone (`into`, else the repository the current directory
    /// is in) as a branch of the same name, through a git bundle — origin is not needed, as Clave merges a
    /// worktree. The workspace then counts those commits as saved.
    public func fetch(_ directory: String, cluster: ClusterOptions, into: String?, localBranch: String?, force: Bool) async throws -> WorkspaceFetchResult {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let local = try await LocalRepository.find(ctx, into: into)
        let s = try await w.state()
        if let problem = s.problem { throw SoError("nothing to fetch from \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone") }
        guard s.branch != "HEAD" else { throw SoError("\(w.name)'s checkout is not on a branch (detached HEAD)",
                hint: "check out a branch in the workspace first") }
        let branch = localBranch ?? s.branch
        // Streamed out of the container into a file (TakenWork), never held in memory.
        try await TakenWork.take(w, s, into: local, snapshot: false).use { taken in try await taken.moveBranch(branch, to: s.head, force: force) }
        try await w.run("recording the fetch", #"cd "$1" && git update-ref refs/so/fetched "$2""#, [s.head])
        if !s.uncommitted.isEmpty {
            ctx.diagnostics.warn("\(s.uncommitted.count) uncommitted change\(s.uncommitted.count == 1 ? " was" : "s were") not fetched",
                                 hint: "take them with 'so deployment --dir \(w.c.model.directory) apply', "
                                     + "or commit them first (push -m MESSAGE commits and pushes)")
        }
        return WorkspaceFetchResult(repository: local.repository, branch: branch, commit: s.head, commits: s.ahead)
    }

    /// The workspace's changes against the commit it started from: commits and uncommitted changes,
    /// new files included (through a scratch index; the workspace's own index is not touched), as a
    /// patch `git apply` takes.
    public func diff(_ directory: String, cluster: ClusterOptions, stat: Bool) async throws -> (state: WorkspaceState, patch: String) {
        let w = try await WorkspaceContainer.open(ctx, directory: directory, cluster: cluster)
        let s = try await w.state()
        if let problem = s.problem { throw SoError("no changes to show in \(w.name): \(problem)",
                hint: "the workspace's clone may have failed: so deployment --dir \(w.c.model.directory) logs clone") }
        let r = try await w.run("diffing against \(s.base.isEmpty ? "the first commit" : String(s.base.prefix(12)))", """
        cd "$1" || exit 3
        idx="$(git rev-parse --git-dir)/so-diff-index"
        cp "$(git rev-parse --git-path index)" "$idx" 2>/dev/null || rm -f "$idx"
        GIT_INDEX_FILE="$idx" git add -A && GIT_INDEX_FILE="$idx" git diff --cached --binary $3 "$2"; rc=$?
        rm -f "$idx"; exit $rc
        """, [s.base.isEmpty ? "4b825dc642cb6eb9a060e54bf8d69288fbee4904" : s.base, stat ? "--stat" : ""])
        return (s, r.stdout)
    }
}
