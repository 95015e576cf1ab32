import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// Deletes whole deployments by namespace (no deployment directory needed).
package struct Remover {
    let ctx: SoContext
    let client: ClusterClient

    package init(ctx: SoContext, client: ClusterClient) {
        self.ctx = ctx
        self.client = client
    }

    package func remove(_ deployments: [DeploymentListing], wait: Bool, timeout: Double) async throws {
        let nsType = ResourceType.namespace
        let pvType = ResourceType.persistentVolume
        for d in deployments {
            // Under the deployment's Lease: a start or stop of it in progress is waited for, up to the timeout. A
            // namespace already going (another run removed it) needs no deleting.
            let lock = DeploymentLock(
                ctx: ctx, client: client, namespace: d.namespace, deployment: d.id, duration: timeout)
            do {
                try await lock.holding(waiting: timeout, progress: ProgressReporter(ctx: ctx, mode: .auto)) {
                    _ = try await client.delete(nsType, name: d.namespace, namespace: nil, propagation: .background)
                }
            } catch {
                guard try await lock.namespaceGone() != nil else { throw error }
            }
            for pv in try await client.list(pvType, namespace: nil, labelSelector: DeploymentNames.selector(d.id)) {
                _ = try await client.delete(pvType, name: pv.name, namespace: nil, propagation: .background)
            }
            // Directories `so up` made are ours to remove; anything else is the user's.
            if d.host == ctx.hostName && Path.dirname(d.directory) == Path.join(ctx.soHome, "deployments")
                && ctx.fs.exists(d.directory)
            {
                // The directory's path came from the cluster: it is checked like any name a user gives.
                do { try ctx.removeDeploymentDirectory(d.directory, namespace: d.namespace) } catch let e as SoError {
                    ctx.diagnostics.warn(e.message, hint: e.hint)
                }
            }
        }
        guard wait else { return }
        let start = ctx.clock.now()
        var pause = 0.25
        while true {
            var left: [String] = []
            for d in deployments where try await client.get(nsType, name: d.namespace, namespace: nil) != nil {
                left.append(d.namespace)
            }
            if left.isEmpty { return }
            if ctx.clock.now().timeIntervalSince(start) >= timeout {
                throw SoError(
                    "namespaces still terminating after \(Int(timeout))s: \(left.joined(separator: ", "))",
                    hint: "look at 'kubectl get namespace \(left[0]) -o yaml' for the finalizers holding it",
                    exitCode: SoError.exitTimeout)
            }
            try await ctx.clock.sleep(seconds: pause)
            pause = min(pause * 2, 2)
        }
    }
}
