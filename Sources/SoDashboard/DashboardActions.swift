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
/// `so down` refuses it without a terminal to ask on). Only a deployment whose directory is on this machine.
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
        guard !l.host.isEmpty else {
            return Outcome(
                ok: false, message: "\(l.namespace)'s namespace names no host: act on it where its directory is")
        }
        guard l.host == page.hostName else {
            return Outcome(ok: false, message: "\(l.name)'s directory is on \(l.host): act on it there")
        }
        do {
            try checkOwned(l)
            return Outcome(ok: true, message: try await run(action, l, form))
        } catch let e as SoError {
            return Outcome(ok: false, message: e.message + (e.hint.map { " (hint: \($0))" } ?? ""))
        } catch {
            return Outcome(ok: false, message: "\(error)")
        }
    }

    /// Whether this `so` made `l`'s directory: a directory right under `$SO_HOME/deployments` (symlinks resolved)
    /// whose deployment is `l`'s namespace. The namespace's annotations are anyone's to write who can annotate it:
    /// a directory planted elsewhere (whose deployment.yml could name credentials files to copy into a namespace
    /// its planter reads) is never acted on.
    public func owns(_ l: DeploymentListing) -> Bool { (try? checkOwned(l)) != nil }

    func checkOwned(_ l: DeploymentListing) throws {
        let fs = ctx.fs
        let deployments = Path.join(ctx.soHome, "deployments")
        let real = fs.realpath(l.directory)
        guard Path.dirname(real) == fs.realpath(deployments), NameRules.isDNSLabel(Path.basename(real)) else {
            throw SoError(
                "\(l.namespace)'s directory \(l.directory) is not under \(deployments): this so did not make it",
                hint: "act on it with so where it was made")
        }
        let probe = DiagnosticSink.dropped("whose namespace a dashboard's action is for")
        let file = try? DeploymentFile.load(Path.join(real, "deployment.yml"), fs: fs, diagnostics: probe)
        let spec = try? Spec.load(Path.join(real, "spec.yml"), fs: fs, diagnostics: probe)
        guard let id = file?.deploymentID, (spec?.namespace ?? NameRules.dnsLabel(id)) == l.namespace else {
            throw SoError(
                "\(l.directory) is not the deployment of namespace \(l.namespace)",
                hint: "act on it with so where it was made")
        }
    }

    func run(_ action: String, _ l: DeploymentListing, _ form: [String: String]) async throws -> String {
        let dir = l.directory
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
