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

    /// How many deployments are removed at once (each is a Lease, a delete and a release: a handful of requests).
    static let parallel = 16

    /// Removes each deployment's namespace (under its Lease), its PersistentVolumes and the directory `so up`
    /// made for it, `parallel` at a time; with `wait`, until every namespace deleted is gone. The requests do
    /// not grow with the number of deployments beyond one delete each: the PersistentVolumes are listed once, and
    /// the wait lists the namespaces once a look (a namespace `so` did not make costs a look inside first).
    package func remove(_ deployments: [DeploymentListing], wait: Bool, timeout: Double) async throws {
        guard !deployments.isEmpty else { return }
        let ids = Set(deployments.map(\.id))
        let volumes = try await client.list(.persistentVolume, namespace: nil, labelSelector: "app").filter {
            ids.contains($0.labels["app"] ?? "")
        }
        let deleted = try await withThrowingTaskGroup(of: String?.self) { group in
            var gone: [String] = []
            for (i, d) in deployments.enumerated() {
                if i >= Self.parallel, let namespace = try await group.next() ?? nil { gone.append(namespace) }
                group.addTask {
                    // Never a volume bound to another namespace's claim (a label is anyone's to write who made it).
                    let own = volumes.filter {
                        $0.labels["app"] == d.id
                            && ($0.at("spec", "claimRef", "namespace")?.string ?? d.namespace) == d.namespace
                    }
                    return try await removeOne(d, volumes: own, timeout: timeout)
                        ? d.namespace : nil
                }
            }
            for try await namespace in group { if let namespace { gone.append(namespace) } }
            return gone
        }
        if wait { try await waitUntilGone(deleted, timeout: timeout) }
    }

    /// One deployment: its namespace deleted under its Lease (a start or stop of it in progress is waited for,
    /// up to the timeout; a namespace already going needs no deleting), its PersistentVolumes, and the directory
    /// `so up` made. A namespace `so` did not make that holds objects of others is kept: only the deployment's
    /// own objects in it are deleted, with a warning. Returns whether the namespace is going.
    func removeOne(_ d: DeploymentListing, volumes: [JSON], timeout: Double) async throws -> Bool {
        let lock = DeploymentLock(ctx: ctx, client: client, namespace: d.namespace, deployment: d.id, duration: timeout)
        var going = true
        do {
            try await lock.holding(waiting: timeout, progress: ProgressReporter(ctx: ctx, mode: .auto)) {
                let others = try await NamespaceContents(client: client)
                    .others(in: d.namespace, madeBySo: d.madeBySo, deployment: d.id)
                guard others.isEmpty else {
                    going = false
                    try await deleteOwn(d)
                    try await RecordStore(client: client, namespace: d.namespace, deployment: d.id).removeAll()
                    let kept = NamespaceContents.keptWarning(d.namespace, others: others)
                    ctx.diagnostics.warn(kept.message, hint: kept.hint)
                    return
                }
                _ = try await client.delete(.namespace, name: d.namespace, namespace: nil, propagation: .background)
            }
        } catch {
            guard try await lock.namespaceGone() != nil else { throw error }
        }
        for pv in volumes {
            _ = try await client.delete(.persistentVolume, name: pv.name, namespace: nil, propagation: .background)
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
        return going
    }

    /// The deployment's own objects in a namespace that stays (what `stop --delete-volumes` deletes).
    func deleteOwn(_ d: DeploymentListing) async throws {
        for type in StopAction.order + [.persistentVolumeClaim] {
            for item in try await StopAction.own(type, of: d.id, in: d.namespace, client: client) {
                _ = try await client.delete(type, name: item.name, namespace: d.namespace, propagation: .background)
            }
        }
    }

    /// Until none of `namespaces` is left: one list of the cluster's namespaces a look (not a get each), after
    /// 0.25 s, then twice as long each time up to 2 s.
    func waitUntilGone(_ namespaces: [String], timeout: Double) async throws {
        let start = ctx.clock.now()
        var pause = 0.25
        while true {
            let present = Set(try await client.list(.namespace, namespace: nil, labelSelector: nil).map(\.name))
            let left = namespaces.filter(present.contains)
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
