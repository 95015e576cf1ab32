import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// So two `so` runs on one deployment cannot interleave: a Lease (`so-deployment-lock`) in the
/// deployment's namespace, new or not. It is taken with one create; the loser names the holder. A lock
/// whose holder died expires after its duration, or at once when the holder was a `so` run on this
/// host; an expired Lease is taken over by a compare-and-swap on its resourceVersion, so two runs
/// racing for it cannot both win.
struct DeploymentLock: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String
    let model: DeploymentModel
    let holder: String
    let duration: Int

    static let name = "so-deployment-lock"

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

    var type: ResourceType { .lease }

    /// Runs `body` holding the lock, and gives the lock up once, whatever happens: when `body` returns or
    /// throws, when the task is cancelled (the release runs in a task of its own), and on SIGINT/SIGTERM
    /// (an interrupt cleanup releases it, waiting at most a few seconds, before `so` exits).
    func holding<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        let onInterrupt = ctx.interrupts.onInterrupt { [self] in
            let released = DispatchSemaphore(value: 0)
            Task { await release(); released.signal() }
            _ = released.wait(timeout: .now() + 5)
        }
        let outcome: Result<T, Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        ctx.interrupts.done(onInterrupt)
        await Task { await release() }.value
        return try outcome.get()
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

    /// One request when nobody holds the lock (a create). A Lease that exists is refused while its holder
    /// lives; one that names this run is this run's (a create the HTTP client retried after it landed).
    func acquire() async throws {
        let now = Timestamps.microTime(ctx.clock.now())
        let lease = KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: Self.name, namespace: namespace,
                               labels: DeploymentNames.controlLabels(model.id),
                               body: [("spec", .map([("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(duration)),
                                                     ("acquireTime", .string(now)), ("renewTime", .string(now))]))])
        if try await client.create(lease, fieldManager: "so") != nil { return }
        guard let current = try await client.get(type, name: Self.name, namespace: namespace) else {
            // Released between the two requests: try once more.
            if try await client.create(lease, fieldManager: "so") != nil { return }
            throw SoError("deployment \(model.id) is being changed by another so run", hint: "wait for it to finish and run again")
        }
        let other = current.at("spec", "holderIdentity")?.string ?? ""
        if other == holder { return }
        let renewed = (current.at("spec", "renewTime")?.string).flatMap(Timestamps.parse) ?? .distantPast
        let expires = renewed.addingTimeInterval(Double(current.at("spec", "leaseDurationSeconds")?.int ?? 0))
        if let error = blocked(by: other, expires: expires, since: current.at("spec", "acquireTime")?.string) { throw error }
        guard let version = current.at("metadata", "resourceVersion")?.string,
              try await client.update(lease, resourceVersion: version, fieldManager: "so") else {
            throw SoError("deployment \(model.id) is being changed by another so run that took the lock at the same moment", hint: "wait for it to finish and run again")
        }
    }

    /// Gives the lock up (deletes the Lease); a failure leaves it to expire.
    func release() async {
        _ = try? await client.delete(type, name: Self.name, namespace: namespace, propagation: .background)
    }
}
