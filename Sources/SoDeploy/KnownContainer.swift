import Foundation
import SoActions
import SoBasics
import SoKube
import SoStack

/// Where a workspace's container was found by the last verb that looked (its namespace, pod and container, the
/// kubectl flags that reached its cluster, the stack's services), kept in the deployment directory
/// (`.so-container.json`, written through a rename). The next `exec`, `shell` or task verb believes it and runs
/// one exec (`ContainerExec`), with no other request to the API server; only when that exec fails is the pod looked up again
/// (and the exec retried once). It holds no secret.
package struct KnownContainer: Codable, Equatable, Sendable {
    package var namespace: String
    package var pod: String
    package var container: String
    /// The workspace's path in the container (its checkout).
    package var path: String
    package var kubectlFlags: [String]
    /// The stack's services (DNS labels): `exec WORD` where WORD is one of them names that service.
    package var services: [String]
    /// The service `shell` opens when none is named (the first pod's first that is not an init container).
    package var shell: String?
    /// What chose the cluster and what the deployment said when this was written (`key`): any change, and the
    /// file is not believed.
    package var key: String
    /// Whether the workspace records its uses (`workspace.idle`), and when this directory last did.
    package var recordsUse: Bool
    package var usedAt: Date?

    package static let file = ".so-container.json"

    /// How often at most a verb records a use on the Namespace (`so.dev/last-used`) from a known container: the
    /// exact time of each use is in the container (`HandedCredentials.marker`), which `cleanup --idle` reads.
    package static let useInterval: Double = 60

    package static func path(_ directory: String) -> String { Path.join(directory, file) }

    /// The inputs that chose the cluster (as `ClusterTargets` reads them) and the stamps of the deployment's
    /// spec and identity: the same key, the same namespace, container and kubectl flags.
    package static func key(_ ctx: SoContext, directory: String, cluster: ClusterOptions) -> String {
        let stamps = ["spec.yml", "deployment.yml"].map { name in
            ctx.fs.modificationDate(Path.join(directory, name)).map { String($0.timeIntervalSince1970) } ?? "-"
        }
        return
            ([cluster.kubeconfig ?? "", cluster.context ?? ""]
            + ["SO_KUBECONFIG", "KUBECONFIG"].map { ctx.environment[$0] ?? "" } + stamps)
            .joined(separator: "\n")
    }

    /// The record of `directory`, when there is one and it was written under the same key; nil otherwise (a file
    /// that does not read is as none: the pod is looked up).
    package static func read(_ ctx: SoContext, directory: String, cluster: ClusterOptions) -> KnownContainer? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let data = try? ctx.fs.readData(path(directory)),  // none yet: the pod is looked up
            let known = try? decoder.decode(KnownContainer.self, from: data)  // written badly: looked up too
        else { return nil }
        return known.key == key(ctx, directory: directory, cluster: cluster) ? known : nil
    }

    /// Writes the record; a directory that cannot be written only costs the next verb a look.
    package func write(_ ctx: SoContext, directory: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            try AtomicWrite.text(
                String(decoding: try encoder.encode(self), as: UTF8.self), to: Self.path(directory), fs: ctx.fs)
        } catch {
            ctx.diagnostics.warn(
                "cannot keep where \(Path.basename(directory))'s container is (\(error)); the next verb looks it up",
                hint: "check that \(directory) is writable")
        }
    }

    /// Forgets the record (the pod it names is gone).
    package static func forget(_ ctx: SoContext, directory: String) {
        try? ctx.fs.remove(path(directory))  // absent already: nothing to forget
    }

    /// Whether a use is to be recorded on the Namespace now (never recorded from here, or over `useInterval` ago).
    package func useDue(_ now: Date) -> Bool {
        recordsUse && (usedAt.map { now.timeIntervalSince($0) >= Self.useInterval } ?? true)
    }
}

extension ConnectedDeployment {
    /// A use of the known container recorded on the Namespace when due (`KnownContainer.useDue`), and the record
    /// of `directory` told when.
    package func recordUseIfDue(_ known: KnownContainer, directory: String) async throws {
        let now = ctx.clock.now()
        guard known.useDue(now) else { return }
        try await recordUse()
        var known = known
        known.usedAt = now
        known.write(ctx, directory: directory)
    }

    /// The record of the workspace container `pod` runs, as this verb found it.
    package func known(pod: String, usedAt: Date?) -> KnownContainer? {
        guard let w = model.spec.workspace else { return nil }
        let services = (model.pods + model.jobs).flatMap { $0.compose.services.map { NameRules.dnsLabel($0.name) } }
        return KnownContainer(
            namespace: namespace, pod: pod, container: NameRules.dnsLabel(w.service), path: w.path,
            kubectlFlags: target.kubectlFlags, services: services, shell: ObserveAction.shellService(model),
            key: KnownContainer.key(ctx, directory: model.directory, cluster: options), recordsUse: recordsUse,
            usedAt: usedAt)
    }
}
