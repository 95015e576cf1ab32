import Foundation
import SoActions
import SoBasics
import SoStack

/// `so deployment restart` (laconic-so's GitOps restart): optionally pull the stack source, refresh the
/// deployment directory from its own spec (identity and data kept), re-apply, then roll the pods.
public struct ResyncAction {
    public let ctx: SoContext
    public init(_ ctx: SoContext) { self.ctx = ctx }

    public func run(directory: String, cluster: ClusterOptions, pull: Bool, wait: Bool, timeout: Double) async throws {
        let dir = ctx.absolute(directory)
        let identity = try DeploymentFile.load(
            Path.join(dir, "deployment.yml"), fs: ctx.fs, diagnostics: ctx.diagnostics)
        if pull, let source = identity.stackSource {
            // No git, like a stack outside a checkout (rev-parse fails), leaves nothing to pull.
            let top = try? await ctx.processes.run(
                ["git", "-C", source, "rev-parse", "--show-toplevel"], workingDirectory: nil, environment: nil,
                timeout: 30)
            if let top, top.exitCode == 0 {
                let repo = top.stdout.trimmedWhitespace
                let r = try await ctx.processes.run(
                    ["git", "-C", repo, "pull", "--ff-only", "--quiet"], workingDirectory: nil, environment: nil,
                    timeout: 600)
                guard r.exitCode == 0 else {
                    throw SoError(
                        "cannot pull \(repo): \(r.lastErrorLine)", hint: "resolve it by hand, or restart without --pull"
                    )
                }
                ctx.say("pulled \(repo)")
            } else {
                ctx.say("\(source) is not in a git repository; using it as it is")
            }
        }
        try await CreateAction(ctx).run(
            CreateRequest(specFile: Path.join(dir, "spec.yml"), deploymentDir: dir, update: true))
        var start = StartRequest(directory: dir, cluster: cluster, wait: false, timeout: timeout, progress: .plain)
        start.verb = "restart"
        try await StartAction(ctx).run(start)
        try await ObserveAction(ctx).restart(dir, cluster: cluster, wait: wait, timeout: timeout)
    }
}
