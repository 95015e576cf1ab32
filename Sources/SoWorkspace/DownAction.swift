import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

extension DownAction {
    /// A workspace's work before it goes: `--keep`/`--merge` take it into the local repository; without a
    /// choice, a terminal is asked when there is work. Returns whether what remains may be discarded.
    func settle(_ req: DownRequest, dir: String) async throws -> Bool {
        if req.discard || req.choice == .discard { return true }
        guard ctx.isWorkspace(dir) else { return false }
        var choice = req.choice
        if req.dryRun {
            if let choice {
                ctx.console.out("would \(choice.rawValue) \(req.name)'s work into the local repository first")
            }
            return false
        }
        let w = try await WorkspaceContainer.open(ctx, directory: dir, cluster: req.cluster, known: false)
        guard w.pod != nil else {
            if let choice {
                throw SoError(
                    "cannot \(choice.rawValue) \(req.name)'s work: its \(w.spec.service) container is not running",
                    hint: "start it (so deployment --name \(req.name) start), then down again")
            }
            return false
        }
        if choice == nil {
            // A checkout that cannot be read leaves nothing to ask about: the guard says why it refuses.
            let read: WorkspaceState
            do { read = try await w.state() } catch is SoError { return false }
            guard let losses = read.losses, read.problem == nil else { return false }
            let question =
                "\(req.name) holds \(losses).\n"
                + "keep its branch in your repository, merge it, or discard it? [k]eep/[m]erge/[d]iscard/[C]ancel: "
            guard let answer = ctx.console.ask(question) else { return false }
            switch answer.trimmedSpaces.lowercased() {
            case "k", "keep": choice = .keep
            case "m", "merge": choice = .merge
            case "d", "discard": return true
            default:
                throw SoError(
                    "\(req.name) was not removed",
                    hint: "so down \(req.name) --keep, --merge or --discard says what to do with its work")
            }
        }
        guard let choice else { return false }
        try await WorkspaceReturnAction(ctx).endWith(choice, w, into: req.into)
        return false
    }
}

/// `so down NAME`: stop with volumes and namespace, then remove the directory `so up` made. A
/// deployment already gone is not an error; one whose directory is gone is found by its namespace.
public struct DownAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    @discardableResult
    public func run(_ req: DownRequest) async throws -> Bool {
        let dir = try ctx.namedDeployment(req.name)
        // Refused before anything is deleted, on the cluster or here (a directory that is a symlink to elsewhere).
        try ctx.checkDeploymentDirectory(dir, namespace: req.name)
        // Made on another machine: its directory comes from the cluster's record, and down goes the same way.
        if !ctx.fs.exists(dir) && !req.dryRun {
            let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
            do {
                _ = try await RecordAction(ctx).materialize(
                    name: req.name, client: try ctx.connect(target.connection), foundIn: (target, req.cluster))
            } catch var e as SoError where e.exitCode == RecordGate.refused {
                // A refused record makes no directory, so the work guard cannot read the workspace's checkout:
                // what the cluster holds goes without it only when the user said its work may be discarded.
                guard req.discard || req.choice == .discard else {
                    e.hint = "so down \(req.name) --discard removes its namespace without reading its work"
                    throw e
                }
                ctx.diagnostics.warn(e.message, hint: "down removes \(req.name)'s namespace without it")
            }
        }
        if ctx.fs.isFile(Path.join(dir, "deployment.yml")) {
            let discard = try await settle(req, dir: dir)
            try await WorkGuard(
                ctx: ctx, directory: dir, cluster: req.cluster, address: "--name \(req.name)",
                anyway: "so down \(req.name) --discard"
            )
            .check(discard: discard, dryRun: req.dryRun)
            // Checked above: a guard in stop would read the checkout again. Its pods and volumes gone, the
            // workspace is: the namespace's own deletion (about 5 s more) is not waited for.
            var stop = StopRequest(
                directory: dir, cluster: req.cluster, deleteVolumes: true, deleteNamespace: true,
                timeout: req.timeout, dryRun: req.dryRun, discard: true, volumeGuard: nil)
            stop.waitForNamespace = false
            try await StopAction(ctx).run(stop)
            if req.dryRun {
                ctx.console.out("would remove directory \(dir)")
                return true
            }
            try ctx.removeDeploymentDirectory(dir, namespace: req.name)
            ctx.say("removed \(req.name)")
            return true
        }
        if let choice = req.choice, choice == .keep || choice == .merge {
            throw SoError(
                "\(req.name) has no deployment directory here, so its work cannot be read to --\(choice.rawValue) it",
                hint: "'so down \(req.name) --discard' removes what is left on the cluster")
        }
        let target = try await ClusterTargets(ctx: ctx).shared(req.cluster)
        let client = try ctx.connect(target.connection)
        let found = try await ListAction(ctx).list(client).filter { $0.namespace == req.name || $0.name == req.name }
        if req.dryRun {
            for d in found {
                ctx.console.out("would delete Namespace \(d.namespace) (deployment \(d.name)) and its volumes")
            }
            if ctx.fs.isDirectory(dir) { ctx.console.out("would remove directory \(dir)") }
            return !found.isEmpty
        }
        if found.isEmpty {
            if ctx.fs.exists(dir) { try ctx.removeDeploymentDirectory(dir, namespace: req.name) }
            ctx.say("\(req.name) does not exist; nothing to do")
            return false
        }
        try await Remover(ctx: ctx, client: client).remove(found, wait: true, timeout: req.timeout)
        if ctx.fs.exists(dir) { try ctx.removeDeploymentDirectory(dir, namespace: req.name) }
        ctx.say("removed \(req.name)")
        return true
    }
}
