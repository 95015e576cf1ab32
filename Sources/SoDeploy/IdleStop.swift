import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// `so cleanup --idle`'s stop of one workspace, under its deployment's Lease (a start, stop or claim of it in
/// progress is not waited for: the workspace is kept this round). Its Deployments and their pods are deleted
/// (the pods end now, as stop makes them, not when the garbage collector gets to them); its volumes, Secrets,
/// Services and policies stay, and its Namespace says `so.dev/idle-stopped`.
package enum IdleStop {
    /// false: another `so` holds the workspace's Lease.
    package static func run(_ ctx: SoContext, client: ClusterClient, _ d: DeploymentListing) async throws -> Bool {
        let lock = DeploymentLock(ctx: ctx, client: client, namespace: d.namespace, deployment: d.id, duration: 60)
        do {
            try await lock.acquire(waiting: 0, progress: nil)
        } catch let e as SoError {
            ctx.verbose("\(d.name): \(e.message)")
            return false
        }
        try await lock.held {
            let selector = DeploymentNames.selector(d.id)
            for dep in try await client.list(.deployment, namespace: d.namespace, labelSelector: selector) {
                _ = try await client.delete(
                    .deployment, name: dep.name, namespace: d.namespace, propagation: .background)
            }
            for pod in try await client.list(.pod, namespace: d.namespace, labelSelector: selector) {
                _ = try await client.delete(.pod, name: pod.name, namespace: d.namespace, propagation: .background)
            }
            _ = try await client.annotate(
                .namespace, name: d.namespace, namespace: nil,
                [(DeploymentNames.Annotation.idleStopped, Timestamps.rfc3339(ctx.clock.now()))])
        }
        return true
    }
}
