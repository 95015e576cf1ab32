import Foundation
import SoBasics
import SoKube
import SoStack

/// So two `so` runs on one deployment cannot interleave. A namespace this run creates is created locked
/// (annotations naming the holder and when the lock expires: a create is atomic, so nothing else can
/// be holding it); an existing namespace is locked with a Lease in it. The loser names the holder; a lock
/// whose holder died expires after its duration, or at once when the holder was a `so` run on this host.
struct DeploymentLock {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String
    let model: DeploymentModel
    let holder: String
    let duration: Int

    static let name = "so-deployment-lock"
    static let holderAnnotation = "so.dev/lock-holder"
    static let expiresAnnotation = "so.dev/lock-expires"

    /// How this run holds the lock.
    enum Held { case lease, namespace }

    init(ctx: SoContext, client: ClusterClient, namespace: String, model: DeploymentModel, duration: Double) {
        self.ctx = ctx
        self.client = client
        self.namespace = namespace
        self.model = model
        let host = ctx.hostName
        let tag = ctx.entropy.bytes(4).map { String($0, radix: 16) }.joined()
        holder = "\(host):\(getpid()):\(tag)"
        self.duration = max(60, Int(duration) + 60)
    }

    var type: ResourceType { ResourceType.known.first { $0.kind == "Lease" }! }

    /// The namespace as this run creates it when it does not exist: owned by the deployment directory and
    /// locked by this run. Only what never changes is in it (a create's fields stay with it); the labels
    /// and the rest come with the first apply phase.
    var lockedNamespace: KubeObject {
        KubeObject(apiVersion: "v1", kind: "Namespace", name: namespace,
                   annotations: [("laconic.com/deployment-dir", model.directory), (Self.holderAnnotation, holder),
                                 (Self.expiresAnnotation, Timestamps.microTime(ctx.clock.now().addingTimeInterval(Double(duration))))])
    }

    /// Whether a lock held by `other` until `expires` stops this run: nil when it is free (nobody, expired,
    /// or a dead `so` run of this host, which is taken over with a warning); else the error naming it.
    func blocked(by other: String, expires: Date, since: String?) -> SoError? {
        guard !other.isEmpty, expires > ctx.clock.now() else { return nil }
        let parts = other.split(separator: ":")
        if parts.count == 3 && String(parts[0]) == ctx.hostName && Int32(parts[1]).map({ !ctx.isProcessAlive($0) }) == true {
            ctx.diagnostics.warn("taking over the lock of an earlier so run (\(other)) that is no longer running",
                                 hint: "it was interrupted; this start converges to the same objects and secrets")
            return nil
        }
        return SoError("deployment \(model.id) is being changed by another so run (\(other))\(since.map { " since \($0)" } ?? "")",
                       hint: "wait for it to finish; if it died, its lock expires at \(Timestamps.microTime(expires))")
    }

    /// Locks a namespace that exists (`existing`, as read): refused while a run that created it still
    /// holds it; then one request when no Lease is held (a create). A Lease that exists is taken over only
    /// when it expired or its holder died on this host, by a compare-and-swap on its resourceVersion, so
    /// two runs that race for it cannot both win.
    func acquire(existing: JSON) async throws -> Held {
        let annotations = existing.annotations
        if let other = annotations[Self.holderAnnotation] {
            let expires = annotations[Self.expiresAnnotation].flatMap(Timestamps.parse) ?? .distantPast
            if let error = blocked(by: other, expires: expires, since: nil) { throw error }
            _ = try await client.patch(.namespace, name: namespace, namespace: nil,
                                       mergePatch: Self.unlockPatch)
        }
        let now = Timestamps.microTime(ctx.clock.now())
        let lease = KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: Self.name, namespace: namespace,
                               labels: [("app", model.id), ("app.kubernetes.io/instance", model.id), ("app.kubernetes.io/managed-by", "so")],
                               body: [("spec", .map([("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(duration)),
                                                     ("acquireTime", .string(now)), ("renewTime", .string(now))]))])
        if try await client.create(lease, fieldManager: "so") != nil { return .lease }
        guard let current = try await client.get(type, name: Self.name, namespace: namespace) else {
            // Released between the two requests: try once more.
            if try await client.create(lease, fieldManager: "so") != nil { return .lease }
            throw SoError("deployment \(model.id) is being changed by another so run", hint: "wait for it to finish and run again")
        }
        let renewed = (current.at("spec", "renewTime")?.string).flatMap(Timestamps.parse) ?? .distantPast
        let expires = renewed.addingTimeInterval(Double(current.at("spec", "leaseDurationSeconds")?.int ?? 0))
        if let error = blocked(by: current.at("spec", "holderIdentity")?.string ?? "", expires: expires, since: current.at("spec", "acquireTime")?.string) {
            throw error
        }
        guard let version = current.at("metadata", "resourceVersion")?.string,
              try await client.update(lease, resourceVersion: version, fieldManager: "so") else {
            throw SoError("deployment \(model.id) is being changed by another so run that took the lock at the same moment", hint: "wait for it to finish and run again")
        }
        return .lease
    }

    static let unlockPatch = Data("{\"metadata\":{\"annotations\":{\"\(holderAnnotation)\":null,\"\(expiresAnnotation)\":null}}}".utf8)

    /// Gives the lock up: deletes the Lease, or takes the lock annotations off the namespace this run created.
    func release(_ held: Held) async {
        switch held {
        case .lease: _ = try? await client.delete(type, name: Self.name, namespace: namespace, propagation: .background)
        case .namespace:
            _ = try? await client.patch(.namespace, name: namespace, namespace: nil, mergePatch: Self.unlockPatch)
        }
    }
}
