import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// The objects `start` applies, built in one place: render's objects, every Secret made of host values
/// (generated values kept from the stored Secret, or made now), and the Namespace's lifecycle annotations
/// and recorded kinds. `start` applies them, `start --dry-run` and `up --dry-run` judge them with start's own
/// unchanged-test, `rotate-secrets` applies the generated-secrets Secret among them.
struct StartManifest {
    let ctx: SoContext
    let model: DeploymentModel

    /// `manifest`'s objects with what start adds. `stored`: the generated-secrets Secret as the cluster holds
    /// it; `withSecrets` false leaves the host-value Secrets out (`update-envs`); `rotate`: generated keys made
    /// anew although stored (`rotate-secrets`); `make` false: values to be made are named, not made (left empty);
    /// `withholdSecretEnv`: a pool member's start (no `secret-env` values). Returns the keys made now (or to be made) too.
    func objects(
        _ manifest: Manifest, stored: JSON?, ttl: Double?, withSecrets: Bool = true,
        rotate: Set<String> = [], make: Bool = true, withholdSecretEnv: Bool = false
    ) throws -> (objects: [KubeObject], madeNow: [String]) {
        var objects = manifest.objects
        if let i = objects.firstIndex(where: { $0.isKind(.namespace) }) {
            objects[i].annotations +=
                lifecycleAnnotations(ttl: ttl) + [
                    (DeploymentNames.Annotation.kinds, StartAction.recordedKinds(objects))
                ]
        }
        guard withSecrets else { return (objects, []) }
        // Values read from the cluster, made or copied from the host; render builds the Secrets.
        let gathered = try SecretSources(ctx: ctx, model: model, withholdSecretEnv: withholdSecretEnv)
            .values(stored: stored, rotate: rotate, make: make)
        return (try Renderer.adding(gathered.values, to: objects, model: model), gathered.madeNow)
    }

    /// When and where this start happened, and when the deployment expires (`ttl`): what
    /// `so deployment list` and `so cleanup` read.
    func lifecycleAnnotations(ttl: Double?) -> [(String, String)] {
        let now = ctx.clock.now()
        var a: [(String, String)] = [
            (DeploymentNames.Annotation.startedAt, Timestamps.rfc3339(now)),
            (DeploymentNames.Annotation.host, ctx.hostName),
        ]
        if let ttl = ttl ?? model.spec.ttl {
            a.append((DeploymentNames.Annotation.expiresAt, Timestamps.rfc3339(now.addingTimeInterval(ttl))))
        }
        return a
    }
}
