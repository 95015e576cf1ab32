import Foundation
import SoBasics
import SoKube
import SoStack

/// A Lease in the deployment's namespace, so two `so` runs on one deployment cannot interleave. The
/// loser names the holder; a lease whose holder died expires after its duration.
struct DeploymentLock {
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

    static func timestamp(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date).replacingOccurrences(of: "Z", with: "000Z")
    }

    static func parse(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return d }
        // MicroTime has six fractional digits; ISO8601DateFormatter reads three.
        if let dot = text.firstIndex(of: "."), let z = text.lastIndex(of: "Z") {
            let frac = text[text.index(after: dot)..<z]
            return f.date(from: String(text[..<dot]) + "." + frac.prefix(3) + "Z")
        }
        return nil
    }

    var type: ResourceType { ResourceType.known.first { $0.kind == "Lease" }! }

    /// One request when nobody holds the lock (a create). A lease that exists is taken over only when
    /// it expired or its holder died on this host, by a compare-and-swap on its resourceVersion, so two
    /// runs that race for it cannot both win.
    func acquire() async throws {
        let now = Self.timestamp(ctx.clock.now())
        let lease = KubeObject(apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: Self.name, namespace: namespace,
                               labels: [("app", model.id), ("app.kubernetes.io/instance", model.id), ("app.kubernetes.io/managed-by", "so")],
                               body: [("spec", .map([("holderIdentity", .string(holder)), ("leaseDurationSeconds", .int(duration)),
                                                     ("acquireTime", .string(now)), ("renewTime", .string(now))]))])
        if try await client.create(lease, fieldManager: "so") != nil { return }
        guard let existing = try await client.get(type, name: Self.name, namespace: namespace) else {
            // Released between the two requests: try once more.
            if try await client.create(lease, fieldManager: "so") != nil { return }
            throw SoError("deployment \(model.id) is being changed by another so run", hint: "wait for it to finish and run again")
        }
        let other = existing.at("spec", "holderIdentity")?.string ?? ""
        let renewed = (existing.at("spec", "renewTime")?.string).flatMap(Self.parse) ?? .distantPast
        let seconds = Double(existing.at("spec", "leaseDurationSeconds")?.int ?? 0)
        let expires = renewed.addingTimeInterval(seconds)
        let parts = other.split(separator: ":")
        let deadHereBefore = parts.count == 3 && String(parts[0]) == ctx.hostName && Int32(parts[1]).map { !ctx.isProcessAlive($0) } == true
        if deadHereBefore && expires > ctx.clock.now() {
            ctx.diagnostics.warn("taking over the lock of an earlier so run (\(other)) that is no longer running",
                                 hint: "it was interrupted; this start converges to the same objects and secrets")
        } else if !other.isEmpty && expires > ctx.clock.now() {
            throw SoError("deployment \(model.id) is being changed by another so run (\(other)) since \(existing.at("spec", "acquireTime")?.string ?? "?")",
                          hint: "wait for it to finish; if it died, its lock expires at \(Self.timestamp(expires))")
        }
        guard let version = existing.at("metadata", "resourceVersion")?.string,
              try await client.update(lease, resourceVersion: version, fieldManager: "so") else {
            throw SoError("deployment \(model.id) is being changed by another so run that took the lock at the same moment", hint: "wait for it to finish and run again")
        }
    }

    /// Deletes the lease this run holds (verified when it was acquired; it lasts longer than the run's wait).
    func release() async {
        _ = try? await client.delete(type, name: Self.name, namespace: namespace, propagation: .background)
    }
}
