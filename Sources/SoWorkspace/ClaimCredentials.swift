import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

/// The claimer's credentials, handed to the warm pool's member `so up` claimed (its start withheld everyone's):
/// the workspace's Secret gets the spec's `secret-env` values from this environment (what the container reads
/// when it starts again), and the running container gets them at once (`HandedCredentials`). Values go to the API
/// server and through the exec's stdin only.
package struct ClaimCredentials {
    package let ctx: SoContext

    package init(ctx: SoContext) { self.ctx = ctx }

    /// Hands in the values of `w`'s `secret-env` that this environment has; the ones it lacks are said, as a cold
    /// start says them.
    /// `only`: just these of the keys (a GitHub App's renewed token), merged into what the container was handed
    /// before, and to the Secret alone when no container runs; nothing is said of the others.
    /// `pool`: a claim's, whose record names what its creator agreed to hand in (`PoolRecord.secretEnv`), into the
    /// claimed member's namespace only; what the member's own record names beyond it is not handed in (said).
    package func hand(
        _ w: WorkspaceContainer, only: [String]? = nil, pool: (record: PoolRecord, namespace: String)? = nil
    )
        async throws
    {
        let values = try self.values(w, only: only, pool: pool)
        guard !values.isEmpty else { return }
        try await patch(w, values)
        if only != nil, w.pod == nil { return }  // the container starts with the Secret's values
        let script = only == nil ? HandedCredentials.writeScript : HandedCredentials.mergeScript(values.map(\.key))
        let r = try await w.capture(script, [], stdin: .bytes(Data(HandedCredentials.text(values).utf8)), timeout: 60)
        guard r.exitCode == 0 else {
            throw SoError(
                "handing the credentials to \(w.name) failed: \(r.lastErrorLine)",
                hint: "see it for yourself: so deployment --dir \(w.c.model.directory) shell")
        }
    }

    /// The values of `w`'s `secret-env` this environment has, to hand in (`hand`); the ones it lacks, and a claim's
    /// that its pool was not made with, are said.
    package func values(
        _ w: WorkspaceContainer, only: [String]? = nil, pool: (record: PoolRecord, namespace: String)? = nil
    ) throws -> [(key: String, value: String)] {
        let model = w.c.model
        var keys = model.spec.secretEnv.filter { only?.contains($0) ?? true }
        if let pool {
            guard w.c.namespace == pool.namespace else {
                throw SoError(
                    "the claimed member's files name namespace \(w.c.namespace), not \(pool.namespace) where it was claimed",
                    hint: "nothing was handed in; remove it: so down \(w.name) --discard")
            }
            let allowed = Set(pool.record.secretEnv ?? [])
            let withheld = keys.filter { !allowed.contains($0) }
            if !withheld.isEmpty {
                ctx.diagnostics.warn(
                    "secret-env \(withheld.joined(separator: ", ")) of \(w.name) \(withheld.count == 1 ? "is" : "are") not "
                        + "handed in from your environment: pool \(pool.record.name) was not made with "
                        + "\(withheld.count == 1 ? "it" : "them") (the member's record names it, and anyone who may "
                        + "write Secrets in its namespace writes that)",
                    hint: "to hand it in: so deployment --dir \(model.directory) start --copy-secret-env")
            }
            keys.removeAll { !allowed.contains($0) }
        }
        let unset = keys.filter { ctx.environment[$0] == nil }
        if only == nil, !unset.isEmpty {
            ctx.diagnostics.warn(
                "secret-env \(unset.joined(separator: ", ")) \(unset.count == 1 ? "is" : "are") not set in the environment; "
                    + "\(w.name) gets no value for \(unset.count == 1 ? "it" : "them")",
                hint: "export \(unset.count == 1 ? unset[0] : "the ones you need") before 'so up'")
        }
        return keys.compactMap { key in ctx.environment[key].map { (key: key, value: $0) } }
    }

    /// The workspace's Secret given `values` (what its container reads when it starts again).
    package func patch(_ w: WorkspaceContainer, _ values: [(key: String, value: String)]) async throws {
        guard !values.isEmpty else { return }
        let data = YValue.map(values.map { ($0.key, .string(SecretValue(text: $0.value).base64)) })
        _ = try await w.c.client.patch(
            .secret, name: DeploymentNames.generatedSecrets(w.c.model.id), namespace: w.c.namespace,
            mergePatch: Data(JSONWriter.bytes(.map([("data", data)]), .compact)))
    }
}
