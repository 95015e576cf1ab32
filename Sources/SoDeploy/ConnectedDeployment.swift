import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// A deployment, resolved and connected: what the read verbs share. A class: verbs hand it down their calls, and a
/// copy of its context and model is over a kilobyte (issue 67); nothing in it changes once opened.
package final class ConnectedDeployment: Sendable {
    package let ctx: SoContext
    package let model: DeploymentModel
    package let namespace: String
    package let client: ClusterClient
    package let target: ClusterTarget
    /// How the cluster was reached (a verb that starts the deployment again reaches it the same way).
    package let options: ClusterOptions

    init(_ ctx: SoContext, model: DeploymentModel, target: ClusterTarget, options: ClusterOptions) throws {
        (self.ctx, self.model, self.target, self.options) = (ctx, model, target, options)
        namespace = Renderer.namespace(of: model)
        client = try ctx.connect(target.connection)
    }

    package static func open(_ ctx: SoContext, directory: String, cluster: ClusterOptions) async throws
        -> ConnectedDeployment
    {
        let model = try DeploymentLoader.load(ctx.absolute(directory), fs: ctx.fs, diagnostics: ctx.diagnostics)
        ctx.phase("deployment loaded: \(Path.basename(directory))")
        var options = cluster
        options.performClusterManagement = false
        let target = try await ClusterTargets(ctx: ctx).resolve(model, options, allowCreate: false)
        ctx.phase("cluster target resolved")
        return try ConnectedDeployment(ctx, model: model, target: target, options: options)
    }

    /// The deployment's Lease, for a verb that writes to it.
    func lock(timeout: Double) -> DeploymentLock {
        DeploymentLock(ctx: ctx, client: client, namespace: namespace, model: model, duration: timeout)
    }

    /// Pods of the deployment: Deployments' (`app=<id>`) then Jobs' (`app=<id>-job`).
    func pods() async throws -> [JSON] {
        let pod = ResourceType.pod
        return try await client.list(pod, namespace: namespace, labelSelector: DeploymentNames.selector(model.id))
            + client.list(pod, namespace: namespace, labelSelector: DeploymentNames.selector("\(model.id)-job"))
    }
}
