import Foundation
import SoBasics
import SoKube
import SoStack

/// The deployment's `<id>-generated-secrets` Secret: `$generate` values made once with the CSPRNG and
/// kept across start, restart, update and re-apply; `secret-env` values copied from the host
/// environment at start. Values never reach stdout, logs or files.
struct GeneratedSecrets {
    let ctx: SoContext
    let model: DeploymentModel
    let namespace: String

    var name: String { "\(model.id)-generated-secrets" }

    var isNeeded: Bool { !model.secretKeys.isEmpty }

    /// The Secret to apply, built from what the cluster already holds; `rotate` lists keys to make anew.
    func desired(existing: JSON?, rotate: Set<String> = []) throws -> (object: KubeObject, generated: [String], copied: [String]) {
        let current = (existing?["data"]?.object ?? [:]).compactMapValues { $0.string }
        var data: [(String, YValue)] = []
        var generated: [String] = [], copied: [String] = []
        for entry in model.spec.config {
            guard let token = try GenerateToken.parse(entry.value, at: SourceLocation(file: model.spec.path, line: entry.line)) else { continue }
            if let value = current[entry.key], !rotate.contains(entry.key) {
                data.append((entry.key, .string(value)))
            } else {
                data.append((entry.key, .string(Data(token.generate(using: ctx.entropy).utf8).base64EncodedString())))
                generated.append(entry.key)
            }
        }
        var unset: [String] = []
        for key in model.spec.secretEnv where !data.contains(where: { $0.0 == key }) {
            if let value = ctx.environment[key] {
                data.append((key, .string(Data(value.utf8).base64EncodedString())))
                copied.append(key)
            } else if let value = current[key] {
                data.append((key, .string(value)))
            } else {
                unset.append(key)
            }
        }
        if !unset.isEmpty {
            ctx.diagnostics.warn("secret-env \(unset.joined(separator: ", ")) \(unset.count == 1 ? "is" : "are") not set in the environment; containers get no value for \(unset.count == 1 ? "it" : "them")",
                                 hint: "export \(unset.count == 1 ? unset[0] : "the ones you need") before 'so deployment start'", at: SourceLocation(file: model.spec.path))
        }
        let labels: [(String, String)] = [("app", model.id), ("app.kubernetes.io/stack", KubeNames.labelValue(model.stackName)),
                                          ("app.kubernetes.io/instance", model.id), ("app.kubernetes.io/managed-by", "so")]
        let object = KubeObject(apiVersion: "v1", kind: "Secret", name: name, namespace: namespace, labels: labels,
                                annotations: [("so.dev/generated-secrets", "true")],
                                body: [("type", .string("Opaque")), ("data", .map(data))])
        return (object, generated, copied)
    }
}
