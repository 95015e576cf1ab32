import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// What removing a workspace's volume (`so down`, `stop --delete-volumes`) would lose: a workspace (spec
/// `workspace:`) whose checkout holds commits neither pushed nor fetched, or uncommitted changes, is not
/// removed without `--discard`. One that is not running cannot be read, and is refused the same way.
public struct WorkGuard: VolumeGuard {
    let ctx: SoContext
    let directory: String
    let cluster: ClusterOptions
    /// How the user names it on `so deployment` (`--name N`, `--dir D`).
    let address: String
    /// The command line that removes it anyway.
    let anyway: String

    public init(ctx: SoContext, directory: String, cluster: ClusterOptions, address: String, anyway: String) {
        self.ctx = ctx
        self.directory = directory
        self.cluster = cluster
        self.address = address
        self.anyway = anyway
    }

    /// The guard of `so deployment --dir D stop --delete-volumes`.
    public static func stop(_ ctx: SoContext, directory: String, cluster: ClusterOptions) -> WorkGuard {
        WorkGuard(
            ctx: ctx, directory: ctx.absolute(directory), cluster: cluster, address: "--dir \(directory)",
            anyway: "so deployment --dir \(directory) stop --delete-volumes --discard")
    }

    /// The name in `--name N`, else the directory's last part.
    func name(_ address: String) -> String {
        Path.basename(address.hasPrefix("--name ") ? String(address.dropFirst(7)) : directory)
    }

    public func check(discard: Bool, dryRun: Bool) async throws {
        guard ctx.isWorkspace(directory) else { return }
        // An idle-stopped workspace is started to be read, unless nothing may change or it goes anyway.
        let w = try await WorkspaceContainer.open(
            ctx, directory: directory, cluster: cluster, wake: !discard && !dryRun, known: false)
        guard w.pod != nil else {
            if discard { return }
            if dryRun {
                ctx.console.out(
                    "would not check \(w.name) for unpushed work: its \(w.spec.service) container is not running")
                return
            }
            throw SoError(
                "cannot tell whether \(w.name) holds work that is not pushed: its \(w.spec.service) container is not running",
                hint: "start it (so deployment \(address) start) and push, or '\(anyway)' to remove it with its volume")
        }
        let state: WorkspaceState
        do { state = try await w.state() } catch let e as SoError {
            // A container between two crashes (a clone that keeps failing) is listed but cannot be exec'd into.
            if discard {
                ctx.diagnostics.warn("\(e.message); discarding the checkout of \(w.name) unread")
                return
            }
            throw SoError(
                "cannot tell whether \(w.name) holds work that is not pushed: \(e.message)",
                hint: "start it (so deployment \(address) start) and push, or '\(anyway)' to remove it with its volume")
        }
        if let problem = state.problem {
            ctx.verbose("\(w.name): \(problem); nothing to check")
            return
        }
        guard let losses = state.losses else { return }
        if discard {
            ctx.diagnostics.warn("\(w.name): discarding \(losses)")
        } else if dryRun {
            ctx.console.out("would refuse: \(w.name) holds \(losses) (--discard removes it anyway)")
        } else {
            throw SoError(
                "\(w.name) holds work that would be lost: \(losses)",
                hint: "take it first: so down \(name(address)) --keep (its branch into your repository) or --merge; "
                    + "or push it (so deployment \(address) push [-m MESSAGE]), "
                    + "fetch or apply it (so deployment \(address) fetch|apply); '\(anyway)' removes it anyway")
        }
    }
}
