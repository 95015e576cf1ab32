import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack

/// The objects `start` applies, built in one place: render's objects, every Secret made of host values
/// (generated values kept from the stored Secret, or made now), and the Namespace's lifecycle annotations
/// and recorded kinds. `start` applies them, `start --dry-run` and `up --dry-run` judge them with start's own
/// unchanged-test, `rotate-secrets` applies its generated Secret.
struct StartManifest {
    let ctx: SoContext
    let model: DeploymentModel

    /// `manifest`'s objects with what start adds. `stored`: the generated-secrets Secret as the cluster holds
    /// it; `withSecrets` false leaves the host-value Secrets out (`update-envs`). Returns the keys made now too.
    func objects(_ manifest: Manifest, stored: JSON?, ttl: Double?, withSecrets: Bool = true) throws -> (objects: [KubeObject], madeNow: [String]) {
        var objects = manifest.objects
        if let i = objects.firstIndex(where: { $0.kind == "Namespace" }) {
            objects[i].annotations += lifecycleAnnotations(ttl: ttl) + [("so.dev/kinds", StartAction.recordedKinds(objects))]
        }
        guard withSecrets else { return (objects, []) }
        // Values read from the cluster, made or copied from the host; render builds the Secrets.
        let gathered = try SecretSources(ctx: ctx, model: model).values(stored: stored)
        return (try Renderer.adding(gathered.values, to: objects, model: model), gathered.madeNow)
    }

    /// The generated-secrets Secret alone, its `rotate` keys made anew (the others kept from `stored`), as
    /// `objects` builds it: what `rotate-secrets` applies. Returns the keys made now too.
    func generatedSecret(stored: JSON?, rotate: Set<String>) throws -> (objects: [KubeObject], madeNow: [String]) {
        let desired = try SecretSources(ctx: ctx, model: model).generatedValues(stored: stored, rotate: rotate)
        return (try Renderer.secretObjects(model, SecretValues(generated: desired.values)), desired.generated)
    }

    /// When and where this start happened, and when the deployment expires (`ttl`): what
    /// `so deployment list` and `so cleanup` read.
    func lifecycleAnnotations(ttl: Double?) -> [(String, String)] {
        let now = ctx.clock.now()
        var a: [(String, String)] = [("so.dev/started-at", Timestamps.rfc3339(now)), ("so.dev/host", ctx.hostName)]
        if let ttl = ttl ?? model.spec.ttl { a.append(("so.dev/expires-at", Timestamps.rfc3339(now.addingTimeInterval(ttl)))) }
        return a
    }
}
