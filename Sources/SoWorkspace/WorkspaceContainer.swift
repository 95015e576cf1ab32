import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// The container that holds a workspace's checkout (spec `workspace:`), reached with `kubectl exec`.
/// Scripts get their values as positional parameters (`sh -c SCRIPT so PATH ARGS…`): nothing is quoted
/// into a command line, and no secret is ever passed (git's token comes from the container's environment).
package struct WorkspaceContainer {
    let ctx: SoContext
    let c: ConnectedDeployment
    let spec: WorkspaceSpec
    let name: String
    let container: String
    /// The running pod; nil when none runs (a stopped workspace). Looked up again when it was known from an earlier
    /// verb and kubectl says it is gone.
    private let found: Found
    package var pod: String? { found.pod }
    /// The container's readiness probe (its exec command), from the pod as looked at now; nil when it has none, or
    /// when the pod was known from an earlier verb.
    var readinessProbe: [String]? = nil

    /// Where the pod came from: an earlier verb (`KnownContainer`, not checked until an exec fails), or a look now.
    final class Found: @unchecked Sendable {
        private let lock = NSLock()
        private var _pod: String?
        private var _known: Bool
        init(_ pod: String?, known: Bool) {
            _pod = pod
            _known = known
        }
        var pod: String? { lock.withLock { _pod } }
        var known: Bool { lock.withLock { _known } }
        func set(_ pod: String?) { lock.withLock { (_pod, _known) = (pod, false) } }
    }

    /// `wake`: a workspace `so cleanup --idle` stopped is started again first (a verb that changes nothing, a dry
    /// run, or one that removes it anyway, passes false). The container an earlier verb found is believed (no
    /// request to the API server; a use recorded at most every `KnownContainer.useInterval`); `known: false`
    /// looks at the pods.
    package static func open(
        _ ctx: SoContext, directory: String, cluster: ClusterOptions, wake: Bool = true, known: Bool = true
    ) async throws -> WorkspaceContainer {
        let c = try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster)
        if known, let k = KnownContainer.read(ctx, directory: c.model.directory, cluster: cluster),
            let spec = c.model.spec.workspace, k.namespace == c.namespace, k.kubectlFlags == c.target.kubectlFlags,
            k.container == NameRules.dnsLabel(spec.service), k.path == spec.path
        {
            try await c.recordUseIfDue(k, directory: c.model.directory)
            return WorkspaceContainer(
                ctx: ctx, c: c, spec: spec, name: Path.basename(c.model.directory), container: k.container,
                found: Found(k.pod, known: true))
        }
        return try await of(c, wake: wake)
    }

    /// The workspace of a deployment already opened: only its pods are read (and where its container runs kept
    /// for the next verb).
    static func of(_ c: ConnectedDeployment, wake: Bool = true) async throws -> WorkspaceContainer {
        let spec = try workspaceSpec(c)
        let container = NameRules.dnsLabel(spec.service)
        let running = try await lookUpPod(c, container: container, wake: wake)
        return WorkspaceContainer(
            ctx: c.ctx, c: c, spec: spec, name: Path.basename(c.model.directory), container: container,
            found: Found(running?.name, known: false), readinessProbe: running.flatMap { probe($0, container) })
    }

    /// The exec command of `container`'s readiness probe in `pod`.
    static func probe(_ pod: JSON, _ container: String) -> [String]? {
        let spec = (pod.at("spec", "containers")?.array ?? []).first { $0["name"]?.string == container }
        return spec?.at("readinessProbe", "exec", "command")?.array.compactMap(\.string)
    }

    /// The workspace of a deployment already opened whose container ran in `pod` a moment ago (a claimed pool
    /// member's): believed without a look, kept for the next verb, and looked for again only if an exec finds it gone.
    static func of(_ c: ConnectedDeployment, known pod: String) async throws -> WorkspaceContainer {
        let spec = try workspaceSpec(c)
        try await remember(c, pod: pod)
        return WorkspaceContainer(
            ctx: c.ctx, c: c, spec: spec, name: Path.basename(c.model.directory),
            container: NameRules.dnsLabel(spec.service), found: Found(pod, known: true))
    }

    static func workspaceSpec(_ c: ConnectedDeployment) throws -> WorkspaceSpec {
        guard let spec = c.model.spec.workspace else {
            let name = Path.basename(c.model.directory)
            throw SoError(
                "\(name) is not a workspace: its spec has no 'workspace:' section",
                hint:
                    "add 'workspace: {service: SERVICE, path: /workspace}' to \(Path.join(c.model.directory, "spec.yml")), "
                    + "or use 'so deployment exec'")
        }
        return spec
    }

    /// The pod running `container` now (one request per look), the use recorded and kept with it; nil: none runs.
    static func lookUp(_ c: ConnectedDeployment, container: String, wake: Bool) async throws -> String? {
        try await lookUpPod(c, container: container, wake: wake)?.name
    }

    /// `lookUp`'s pod, as listed.
    static func lookUpPod(_ c: ConnectedDeployment, container: String, wake: Bool) async throws -> JSON? {
        // The workspace's container runs in a Deployment's pod: its pods alone are listed (one request per look).
        let pods = try await c.client.list(
            .pod, namespace: c.namespace, labelSelector: DeploymentNames.selector(c.model.id))
        let running = pods.first { runs($0, container) }
        if running == nil, wake, try await c.wakeIfIdle() {
            return try await lookUpPod(c, container: container, wake: false)
        }
        guard let running else {
            KnownContainer.forget(c.ctx, directory: c.model.directory)
            return nil
        }
        try await remember(c, pod: running.name)
        return running
    }

    /// A use recorded (a workspace with `idle:`), and where the container runs kept for the next verb.
    static func remember(_ c: ConnectedDeployment, pod: String) async throws {
        try await c.recordUse()
        c.known(pod: pod, usedAt: c.recordsUse ? c.ctx.clock.now() : nil)?.write(c.ctx, directory: c.model.directory)
    }

    /// Whether `pod` is running, not being deleted, with `container` running in it (what a verb can exec into).
    static func runs(_ pod: JSON, _ container: String) -> Bool {
        pod.at("status", "phase")?.string == "Running" && pod.at("metadata", "deletionTimestamp") == nil
            && (pod.at("status", "containerStatuses")?.array ?? []).contains {
                $0["name"]?.string == container && $0.at("state", "running") != nil
            }
    }

    func requireRunning() throws -> String {
        guard let pod else {
            throw SoError(
                "\(name)'s \(spec.service) container is not running",
                hint: "start the workspace first: so deployment --dir \(c.model.directory) start")
        }
        return pod
    }

    /// `kubectl exec` of `script` in the container (`sh -c script so PATH ARGS…`), after the credentials a claim
    /// handed in are read (`HandedCredentials`); `stdin` adds `-i` (the script reads standard input).
    func command(_ script: String, _ args: [String], stdin: Bool = false) throws -> [String] {
        try exec().kubectl(stdin ? ["-i"] : [], words(script, args))
    }

    /// The words of `script` run by the container's shell, after the handed credentials are read.
    func words(_ script: String, _ args: [String]) -> [String] {
        ["sh", "-c", HandedCredentials.prelude + "\n" + script, "so", spec.path] + args
    }

    /// The exec of the running container (through the API server, else kubectl).
    func exec() throws -> ContainerExec {
        ContainerExec(
            ctx, client: c.client, namespace: c.namespace, pod: try requireRunning(), container: container,
            kubectlFlags: c.target.kubectlFlags)
    }

    /// Runs a script in the container with `stdin` and captures its output. When the pod was known from an earlier
    /// verb and the exec says it is gone (the script never ran), the pod is looked up again and the script run once
    /// more.
    func capture(_ script: String, _ args: [String], stdin: ExecInput = .none, timeout: Double? = nil) async throws
        -> ProcessResult
    {
        let r = try await exec().run(words(script, args), stdin: stdin, timeout: timeout)
        guard found.known, Self.podGone(r) else { return r }
        let gone = pod ?? ""
        found.set(try await Self.lookUp(c, container: container, wake: true))
        if !ctx.options.quiet, let now = pod { ctx.console.err("so: pod \(gone) is gone; now \(now)") }
        return try await exec().run(words(script, args), stdin: stdin, timeout: timeout)
    }

    /// Whether kubectl failed to reach the pod or its container (kubectl's own words; the command did not run).
    static func podGone(_ r: ProcessResult) -> Bool {
        r.exitCode != 0
            && [
                "(NotFound): pods ", "container not found", "unable to upgrade connection",
                "cannot exec into a container in a completed pod", "does not have a host assigned",
            ].contains { r.stderr.contains($0) }
    }

    /// Runs a script in the container and captures its output; a non-zero exit is an error naming `what`.
    @discardableResult
    package func run(_ what: String, _ script: String, _ args: [String] = [], allowFailure: Bool = false) async throws
        -> ProcessResult
    {
        let r = try await capture(script, args)
        if r.exitCode != 0 && !allowFailure {
            throw SoError(
                "\(what) in \(name) failed: \(r.lastErrorLine)",
                hint: "see it for yourself: so deployment --dir \(c.model.directory) shell")
        }
        return r
    }

    /// The checkout's branch, commits and changes.
    package func state() async throws -> WorkspaceState {
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
