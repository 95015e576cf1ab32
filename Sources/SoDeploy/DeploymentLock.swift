import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// So two `so` runs cannot interleave: a Lease taken with one create; the loser names the holder. Two
/// scopes use it: one deployment (`so-deployment-lock` in its namespace) and the cluster
/// (`so-cluster-lock` in kube-system: the ingress controller install, once per cluster).
///
/// The holder renews the Lease while it holds it (every third of its duration), and only the holder
/// releases it: renewals and the release are compare-and-swaps on the resourceVersion of the holder's
/// last write, so a run whose Lease was taken over (it expired) never renews or deletes the new holder's.
/// A lock whose holder died expires after its duration, or at once when the holder was a `so` run on
/// this host; an expired Lease is taken over by a compare-and-swap too, so two runs racing for it cannot
/// both win.
struct DeploymentLock: Sendable {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String
    let name: String
    let labels: [(String, String)]
    /// What the lock protects, for messages: "deployment ID is being changed …", "the cluster is being set up …".
    let subject: String
    let holder: String
    let duration: Int
    let hold = LeaseHold()

    static let name = "so-deployment-lock"
    static let clusterName = "so-cluster-lock"
    static let clusterNamespace = "kube-system"

    init(ctx: SoContext, client: ClusterClient, namespace: String, model: DeploymentModel, duration: Double) {
        self.init(ctx: ctx, client: client, namespace: namespace, deployment: model.id, duration: duration)
    }

    /// The lock of deployment `id` in its namespace (every verb that writes to it holds it).
    init(ctx: SoContext, client: ClusterClient, namespace: String, deployment id: String, duration: Double) {
        self.init(
            ctx: ctx, client: client, namespace: namespace, name: Self.name, labels: DeploymentNames.controlLabels(id),
            subject: "deployment \(id) is being changed", duration: duration)
    }

    init(
        ctx: SoContext, client: ClusterClient, namespace: String, name: String, labels: [(String, String)],
        subject: String, duration: Double
    ) {
        self.ctx = ctx
        self.client = client
        self.namespace = namespace
        self.name = name
        self.labels = labels
        self.subject = subject
        let host = ctx.hostName
        let tag = ctx.entropy.bytes(4).map { String($0, radix: 16) }.joined()
        holder = "\(host):\(getpid()):\(tag)"
        self.duration = max(60, Int(duration) + 60)
    }

    /// The cluster's lock: what one `so` run sets up for every deployment of a cluster (the ingress
    /// controller) is set up by one run at a time.
    static func cluster(ctx: SoContext, client: ClusterClient, duration: Double) -> DeploymentLock {
        DeploymentLock(
            ctx: ctx, client: client, namespace: clusterNamespace, name: clusterName,
            labels: [DeploymentNames.Label.managedBySo],
            subject: "the cluster is being set up", duration: duration)
    }

    var type: ResourceType { .lease }

    /// Runs `body` holding the lock (`acquire`, then `held`).
    /// `waiting`: how long to wait for another run's lock to be given up (0: fail at once, naming it).
    func holding<T: Sendable>(waiting: Double = 0, progress: ProgressReporter? = nil, _ body: () async throws -> T)
        async throws -> T
    {
        try await acquire(waiting: waiting, progress: progress)
        return try await held(body)
    }

    /// Runs `body` with the lock this run has taken, renewing it, and gives the lock up once, whatever
    /// happens: when `body` returns or throws, when the task is cancelled (the release runs in a task of its
    /// own), and on SIGINT/SIGTERM (an interrupt cleanup releases it, waiting at most a few seconds, before
    /// `so` exits).
    func held<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if ctx.renewsLocks { hold.setRenewer(renewing()) }
        let onInterrupt = ctx.releasingOnInterrupt { [self] in await release() }
        let outcome: Result<T, Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        ctx.interrupts.done(onInterrupt)
        await Task { await release() }.value
        return try outcome.get()
    }

    /// `body` holding `lock`, or without a lock when there is none (nothing of the deployment exists); a
    /// lock another run holds is waited for up to `waiting` seconds.
    static func holding<T: Sendable>(
        _ lock: DeploymentLock?, waiting: Double = 0, progress: ProgressReporter? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        guard let lock else { return try await body() }
        return try await lock.holding(waiting: waiting, progress: progress, body)
    }

    /// `body` with `lock` held (taken already), or without a lock when there is none (a dry run).
    static func held<T: Sendable>(_ lock: DeploymentLock?, _ body: () async throws -> T) async throws -> T {
        guard let lock else { return try await body() }
        return try await lock.held(body)
    }

    /// Whether a lock held by `other` until `expires` stops this run: nil when it is free (nobody, expired,
    /// or a dead `so` run of this host, which is taken over with a warning); else the error naming it.
    func blocked(by other: String, expires: Date, since: String?) -> SoError? {
        guard !other.isEmpty, expires > ctx.clock.now() else { return nil }
        let parts = other.split(separator: ":")
        if parts.count == 3 && String(parts[0]) == ctx.hostName
            && Int32(parts[1]).map({ !ctx.isProcessAlive($0) }) == true
        {
            ctx.diagnostics.warn(
                "taking over the lock of an earlier so run (\(other)) that is no longer running",
                hint: "it was interrupted; this start converges to the same objects and secrets")
            return nil
        }
        return SoError(
            "\(subject) by another so run (\(other))\(since.map { " since \($0)" } ?? "")",
            hint: "wait for it to finish; if it died, its lock expires at \(Timestamps.microTime(expires))")
    }

    func lease(acquired: String, renewed: String) -> KubeObject {
        KubeObject(
            .lease, name: name, namespace: namespace, labels: labels,
            body: [
                (
                    "spec",
                    .map([
                        ("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(duration)),
                        ("acquireTime", .string(acquired)), ("renewTime", .string(renewed)),
                    ])
                )
            ])
    }

    /// Takes the lock, waiting up to `waiting` seconds while another run holds it (`wait`).
    func acquire(waiting: Double = 0, progress: ProgressReporter? = nil) async throws {
        guard let refusal = try await tryAcquire().refusal else { return }
        try await wait(after: refusal, waiting: waiting, progress: progress)
    }

    /// Waits up to `waiting` seconds for the lock another run holds (`refusal` says whose), trying again
    /// after 0.25 s, then twice as long each time up to 2 s (a short hold, as a quick stop's, is noticed
    /// within a second; a long one costs a request every 2 s).
    func wait(after refusal: SoError, waiting: Double, progress: ProgressReporter? = nil) async throws {
        let deadline = ctx.clock.now().addingTimeInterval(waiting)
        var refusal = refusal
        var said = false
        var pause = 0.25
        while true {
            guard ctx.clock.now() < deadline else { throw refusal }
            if !said { progress?.phase("waiting", refusal.message) }
            said = true
            try await ctx.clock.sleep(seconds: pause)
            pause = min(pause * 2, 2)
            guard let again = try await tryAcquire().refusal else { return }
            refusal = again
        }
    }

    /// One request when nobody holds the lock (a create). A Lease that exists is refused while its holder
    /// lives; one that names this run is this run's (a create the HTTP client retried after it landed).
    /// `creating`: the lock's namespace as this run would make it, created first when there is none, and again
    /// when the Lease's create is refused for want of it. Returns `refusal` nil once held, else why not; and
    /// `createdNamespace` true when this run made the namespace and its Lease was the first one in it (an empty
    /// namespace: a first start need not read it). A Lease met there, whoever held it and whether it was then
    /// taken, released or is still held, means another run was inside and may have written: false.
    /// `namespaceMade`: called as soon as this run has made the namespace, before the Lease's create (what a first
    /// start asks next goes beside it).
    func tryAcquire(creating namespaceObject: KubeObject? = nil, namespaceMade: (@Sendable () -> Void)? = nil)
        async throws -> (refusal: SoError?, createdNamespace: Bool)
    {
        let now = Timestamps.microTime(ctx.clock.now())
        let lease = lease(acquired: now, renewed: now)
        var made: JSON?
        var createdNamespace = false
        // The namespace first: a create in a namespace the API server has not seen is refused only after it
        // waited 50 ms for its cache (NamespaceLifecycle), and a first start (every `so up`) met that wait; one
        // that exists costs a refused create (409, a round trip). Not allowed to create namespaces: as before.
        if let namespaceObject {
            do {
                createdNamespace = try await client.create(namespaceObject, fieldManager: "so") != nil
                if createdNamespace { namespaceMade?() }
            } catch let e
                as SoError where e.exitCode == SoError.exitUnreachable
            {
                throw e
            } catch {
                ctx.verbose("could not create namespace \(namespace) first: \(error)")
            }
        }
        do { made = try await client.create(lease, fieldManager: "so") } catch {
            // A namespace deleted meanwhile (another run's stop --delete-namespace or cleanup) holds no
            // Lease: that is what to say, not the API server's refusal.
            guard let namespaceObject, !createdNamespace else {
                if let gone = try await namespaceGone() { throw gone }
                throw error
            }
            if try await client.create(namespaceObject, fieldManager: "so") != nil {
                // No namespace yet: this run made it, and the Lease in it.
                createdNamespace = true
                namespaceMade?()
            } else if let gone = try await namespaceGone() {
                throw gone
            }
            // Made by this run, or by another run starting at the same moment (its create landed between
            // this run's two): the Lease goes in it, or is that run's.
            made = try await client.create(lease, fieldManager: "so")
        }
        if let created = made {
            hold.hold(created, acquired: now)
            return (nil, createdNamespace)
        }
        return (try await takeOver(lease, now: now), false)
    }

    /// The Lease `lease` could not be created: it exists. Taken when it names this run, when its holder
    /// is gone (expired, or a dead `so` run on this host: by compare-and-swap), and when it was released
    /// meanwhile; else why not.
    func takeOver(_ lease: KubeObject, now: String) async throws -> SoError? {
        guard let current = try await client.get(type, name: name, namespace: namespace) else {
            // Released between the two requests: try once more.
            if let created = try await client.create(lease, fieldManager: "so") {
                hold.hold(created, acquired: now)
                return nil
            }
            return SoError("\(subject) by another so run", hint: "wait for it to finish and run again")
        }
        let other = current.at("spec", "holderIdentity")?.string ?? ""
        if other == holder {
            hold.hold(current, acquired: current.at("spec", "acquireTime")?.string ?? now)
            return nil
        }
        let renewed = (current.at("spec", "renewTime")?.string).flatMap(Timestamps.parse) ?? .distantPast
        let expires = renewed.addingTimeInterval(Double(current.at("spec", "leaseDurationSeconds")?.int ?? 0))
        if let error = blocked(by: other, expires: expires, since: current.at("spec", "acquireTime")?.string) {
            return error
        }
        guard let version = current.at("metadata", "resourceVersion")?.string,
            let taken = try await client.update(lease, resourceVersion: version, fieldManager: "so")
        else {
            return SoError(
                "\(subject) by another so run that took the lock at the same moment",
                hint: "wait for it to finish and run again")
        }
        hold.hold(taken, acquired: now)
        return nil
    }

    /// Why no Lease can be made in the lock's namespace, when it is gone or being deleted; else nil.
    func namespaceGone() async throws -> SoError? {
        guard let ns = try await client.get(.namespace, name: namespace, namespace: nil) else {
            return SoError(
                "namespace \(namespace) was deleted while this run waited for it (another so run removed the deployment)",
                hint: "run the command again: it starts from nothing")
        }
        guard ns.at("status", "phase")?.string == "Terminating" else { return nil }
        return SoError(
            "namespace \(namespace) is being deleted (another so run removed the deployment)",
            hint: "run the command again once it is gone ('kubectl get namespace \(namespace)')")
    }

    /// Renews the Lease (its renewTime): a compare-and-swap on this run's last write. false once the lock
    /// is lost (another run changed the Lease: it expired and was taken over), which is said once; a
    /// request that fails is tried again at the next renewal.
    @discardableResult
    func renew() async -> Bool {
        guard let version = hold.version, !hold.lost else { return false }
        let renewed = lease(acquired: hold.acquired, renewed: Timestamps.microTime(ctx.clock.now()))
        do {
            if let stored = try await client.update(renewed, resourceVersion: version, fieldManager: "so") {
                hold.hold(stored)
                return true
            }
        } catch {
            ctx.verbose("could not renew the lock \(namespace)/\(name): \(error)")
            return true
        }
        hold.markLost()
        ctx.diagnostics.warn(
            "the lock \(namespace)/\(name) was taken over by another so run while this one held it",
            hint: "this run took longer than the lock's \(duration) s; run it again once the other has finished")
        return false
    }

    /// Renewals every third of the lock's duration, until the release. The period is real time (a
    /// test's clock stands still): a run renews only when it holds the lock that long. `every`: another
    /// period in seconds (tests).
    func renewing(every seconds: Double? = nil) -> Task<Void, Never> {
        let period = UInt64((seconds ?? Double(duration) / 3) * 1e9)
        return Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: period)  // throws only when cancelled: the check below ends the loop
                if Task.isCancelled { return }
                if await !renew() { return }
            }
        }
    }

    /// Gives the lock up: deletes the Lease only while it is still this run's last write (a precondition
    /// on its resourceVersion), so a lock another run took over is never removed. A renewal that landed
    /// meanwhile is this run's too: read again, the Lease is deleted at its new version. A failure leaves
    /// it to expire.
    func release() async {
        hold.stopRenewing()
        var version = hold.version
        for _ in 0..<3 {
            guard !hold.lost else { return }
            // best effort, both: a lease left behind expires after its duration, and the next start takes it over.
            if let version,
                (try? await client.delete(type, name: name, namespace: namespace, resourceVersion: version)) == true
            {
                return
            }
            // best effort too: an unreadable Lease is left to expire.
            guard let current = try? await client.get(type, name: name, namespace: namespace),
                current.at("spec", "holderIdentity")?.string == holder,
                let now = current.at("metadata", "resourceVersion")?.string, now != version
            else { return }
            version = now
        }
    }
}
