import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack
import SoWorkspace

/// What a page's POST asks for, done by the CLI's own actions (the same Lease, the same refusals): queue a
/// task, cancel one, start or stop a deployment, `down` a workspace (refused while it holds unsaved work, as
/// `so down` refuses it without a terminal to ask on). On this host's own directory when the deployment's is here;
/// otherwise (another host's, or no disk's) on a directory made from the cluster's record, as `so deployment
/// --name` does elsewhere: the page acts on what the cluster runs.
public struct DashboardActions: Sendable {
    public let ctx: SoContext
    public let cluster: ClusterOptions
    /// `ctx`'s console asks nothing: a page's `down` is refused where the terminal would be asked.
    public init(ctx: SoContext, cluster: ClusterOptions) {
        var ctx = ctx
        ctx.console = NoQuestions(base: ctx.console)
        self.ctx = ctx
        self.cluster = cluster
    }

    /// Lines go where the dashboard's go (its log); questions get no answer, as in a script.
    struct NoQuestions: Console {
        let base: Console
        func out(_ line: String) { base.out(line) }
        func err(_ line: String) { base.err(line) }
        var isTerminal: Bool { false }
    }

    public struct Outcome: Sendable, Equatable {
        public var ok: Bool
        public var message: String
    }

    /// Does `form`'s action on the deployment it names; what the page says (one line, as the CLI's errors).
    public func perform(_ form: [String: String], snapshot: DashboardSnapshot, page: PageContext) async -> Outcome {
        guard let action = form["action"], let namespace = form["namespace"], NameRules.isDNSLabel(namespace),
            let l = snapshot.listing(namespace)
        else { return Outcome(ok: false, message: "no such deployment on this cluster") }
        guard page.actions else { return Outcome(ok: false, message: "this dashboard is read-only") }
        do {
            let acting = try await directory(for: l, hostName: page.hostName)
            return Outcome(ok: true, message: try await run(action, l, form, on: acting))
        } catch let e as SoError {
            return Outcome(ok: false, message: e.message + (e.hint.map { " (hint: \($0))" } ?? ""))
        } catch {
            return Outcome(ok: false, message: "\(error)")
        }
    }

    /// Where an action runs and with what: the directory, the context (its environment without what a record
    /// would copy out of it) and the cluster.
    struct Acting {
        var directory: String
        var ctx: SoContext
        var cluster: ClusterOptions
    }

    /// Whether `l`'s directory is this host's (its namespace names this host and the directory is here): then it
    /// is acted on as it is, if this so made it (`checkOwned`); else the page acts through the cluster's record.
    func isHere(_ l: DeploymentListing, hostName: String) -> Bool {
        !l.host.isEmpty && l.host == hostName && ctx.fs.exists(l.directory)
    }

    /// Whether the page may offer actions on `l`: a directory here only if this so made it (`checkOwned`); a
    /// deployment whose directory is elsewhere, through its record (a missing record is said when acted on).
    public func owns(_ l: DeploymentListing, hostName: String) -> Bool {
        !isHere(l, hostName: hostName) || (try? checkOwned(l)) != nil
    }

    /// This host's own directory (checked), or `$SO_HOME/deployments/NAMESPACE` in step with the cluster's record
    /// and checked as hostile input (`RecordTrust`): whoever can write Secrets in the namespace wrote it.
    func directory(for l: DeploymentListing, hostName: String) async throws -> Acting {
        if isHere(l, hostName: hostName) {
            try checkOwned(l)
            return Acting(directory: l.directory, ctx: ctx, cluster: cluster)
        }
        let elsewhere =
            l.host.isEmpty
            ? "\(l.namespace)'s namespace names no host"
            : l.host == hostName
                ? "\(l.name)'s directory \(l.directory) is gone" : "\(l.name)'s directory is on \(l.host)"
        let client: ClusterClient
        do {
            client = try ctx.connect(try await ClusterTargets(ctx: ctx).shared(cluster).connection)
        } catch let e as SoError {
            throw SoError("\(elsewhere), and no cluster to read its record from: \(e.message)", hint: e.hint)
        }
        guard let dir = try await RecordAction(ctx).inStep(name: l.namespace, client: client) else {
            throw SoError(
                "\(elsewhere), and the cluster holds no record of it in namespace \(l.namespace)",
                hint: "act on it with so where its directory is; a start there writes the record the page acts through")
        }
        try checkDeployment(dir, of: l)
        var acting = Acting(directory: dir, ctx: ctx, cluster: cluster)
        // The record's start must not carry this process's own variables (its token, its account) into a Secret of
        // the namespace: left out, the start keeps the values the cluster holds.
        for key in try RecordTrust.withheld(dir, ctx: ctx) { acting.ctx.environment[key] = nil }
        // The cluster the page reads, which the record came from: a directory made from it has no kubeconfig.
        acting.cluster.deploymentsOwn = false
        return acting
    }

    /// Whether this `so` made `l`'s directory: a directory right under `$SO_HOME/deployments` (symlinks resolved)
    /// whose deployment is `l`'s namespace. The namespace's annotations are anyone's to write who can annotate it:
    /// a directory planted elsewhere (whose deployment.yml could name credentials files to copy into a namespace
    /// its planter reads) is never acted on.
    func checkOwned(_ l: DeploymentListing) throws {
        let fs = ctx.fs
        let deployments = Path.join(ctx.soHome, "deployments")
        let real = fs.realpath(l.directory)
        guard Path.dirname(real) == fs.realpath(deployments), NameRules.isDNSLabel(Path.basename(real)) else {
            throw SoError(
                "\(l.namespace)'s directory \(l.directory) is not under \(deployments): this so did not make it",
                hint: "act on it with so where it was made")
        }
        try checkDeployment(real, of: l)
    }

    /// Whether the deployment of `dir` is `l`'s namespace (a record, too, could name another one in spec.yml).
    func checkDeployment(_ dir: String, of l: DeploymentListing) throws {
        let fs = ctx.fs
        let probe = DiagnosticSink.dropped("whose namespace a dashboard's action is for")
        let file = try? DeploymentFile.load(Path.join(dir, "deployment.yml"), fs: fs, diagnostics: probe)
        let spec = try? Spec.load(Path.join(dir, "spec.yml"), fs: fs, diagnostics: probe)
        guard let id = file?.deploymentID, (spec?.namespace ?? NameRules.dnsLabel(id)) == l.namespace else {
            throw SoError(
                "\(dir) is not the deployment of namespace \(l.namespace)",
                hint: "act on it with so where it was made")
        }
    }

    func run(_ action: String, _ l: DeploymentListing, _ form: [String: String], on acting: Acting) async throws
        -> String
    {
        let (dir, ctx, cluster) = (acting.directory, acting.ctx, acting.cluster)
        switch action {
        case "task":
            let text = (form["text"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw SoError("a task needs its text", hint: "say what the agent should do") }
            var req = TaskRequest(directory: dir, text: text)
            req.cluster = cluster
            let queued = try await TaskQueueAction(ctx).submit(req)
            return "queued task \(queued.id) in \(queued.workspace)"
        case "cancel":
            guard let id = form["id"].flatMap({ Int($0) }) else { throw SoError("no task id", hint: "reload the page") }
            let t = try await TaskQueueAction(ctx).cancel(dir, cluster: cluster, id: id)
            return "task \(id): \(t.state)"
        case "start":
            _ = try await StartAction(ctx).run(StartRequest(directory: dir, cluster: cluster, progress: .plain))
            return "started \(l.name)"
        case "stop":
            _ = try await StopAction(ctx).run(
                StopRequest(
                    directory: dir, cluster: cluster, volumeGuard: WorkGuard.stop(ctx, directory: dir, cluster: cluster)
                ))
            return "stopped \(l.name) (its volumes are kept)"
        case "down":
            guard l.workspaceAt != nil, dir == (try? ctx.namedDeployment(l.name)) else {
                // Not a workspace `so up` made: the page has no `down` for it.
                throw SoError("\(l.name) is not a workspace of this host's so up", hint: "stop it instead")
            }
            var req = DownRequest(name: l.name)
            req.cluster = cluster
            _ = try await DownAction(ctx).run(req)
            return "removed \(l.name)"
        default:
            throw SoError("no action '\(action)'", hint: "reload the page")
        }
    }
}
