import Foundation
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// The deployment's `<id>-generated-secrets` Secret: `$generate` values made once with the CSPRNG and
/// kept across start, restart, update and re-apply; `secret-env` values copied from the host
/// environment at start. Values never reach stdout, logs or files.
struct GeneratedSecrets {
    let ctx: SoContext
    let model: DeploymentModel
    let namespace: String

    var name: String { DeploymentNames.generatedSecrets(model.id) }

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
        // Credentials files: read now, straight into the Secret (later files win, as later config.env lines did).
        for file in model.credentialsFiles {
            guard ctx.fs.isFile(file.path) else {
                throw SoError("credentials file not found: \(file.path)", hint: "restore it, or remove it from the spec's credentials-files and run 'so deploy create --update'",
                              at: SourceLocation(file: model.spec.path))
            }
            let pairs = try DotEnv.parse(try ctx.fs.readText(file.path, what: "credentials file"), file: file.path)
            for key in file.keys {
                guard let value = pairs.last(where: { $0.key == key })?.value else {
                    ctx.diagnostics.warn("credentials file \(file.path) no longer holds \(key); containers get no value for it",
                                         hint: "add it back, or run 'so deploy create --update' to refresh the deployment", at: SourceLocation(file: model.spec.path))
                    data.removeAll { $0.0 == key }
                    continue
                }
                data.removeAll { $0.0 == key }
                data.append((key, .string(Data(value.utf8).base64EncodedString())))
                copied.append(key)
            }
        }
        if !unset.isEmpty {
            ctx.diagnostics.warn("secret-env \(unset.joined(separator: ", ")) \(unset.count == 1 ? "is" : "are") not set in the environment; containers get no value for \(unset.count == 1 ? "it" : "them")",
                                 hint: "export \(unset.count == 1 ? unset[0] : "the ones you need") before 'so deployment start'", at: SourceLocation(file: model.spec.path))
        }
        let labels = DeploymentNames.hostSecretLabels(model)
        let object = KubeObject(apiVersion: "v1", kind: "Secret", name: name, namespace: namespace, labels: labels,
                                annotations: [("so.dev/generated-secrets", "true")],
                                body: [("type", .string("Opaque")), ("data", .map(data))])
        return (object, generated, copied)
    }
}

/// Compose `secrets:` as Kubernetes Secrets, made at each start from their source: the file next to the
/// stack's own compose file (never copied into the deployment directory), a host environment variable,
/// or inline content. Values never reach stdout, logs or files.
struct ComposeSecrets {
    let ctx: SoContext
    let model: DeploymentModel
    let namespace: String

    var isNeeded: Bool { (model.pods + model.jobs).contains { c in c.compose.secrets.contains { !$0.external } && c.compose.services.contains { !$0.secrets.isEmpty } } }

    func objects() throws -> [KubeObject] {
        guard isNeeded else { return [] }
        let stack = try ctx.locator.resolve(model.spec.stack, relativeTo: [model.directory, Path.dirname(model.spec.path)], diagnostics: DiagnosticSink())
        let sources = try stack.pods(with: model.spec.with, at: nil) + stack.jobs
        var out: [KubeObject] = []
        for c in model.pods + model.jobs {
            let used = Set(c.compose.services.flatMap(\.secrets).map(\.source))
            let sourceDir = sources.first { $0.name == c.name }.map { Path.dirname($0.composePath) } ?? c.compose.directory
            for s in c.compose.secrets where used.contains(s.name) && !s.external {
                let at = SourceLocation(file: c.compose.path, line: s.line)
                let value: Data
                if let file = s.file {
                    let path = Path.absolute(Path.expandTilde(file, home: ctx.fs.homeDirectory), relativeTo: sourceDir)
                    guard ctx.fs.isFile(path) else { throw SoError("secret '\(s.name)' file not found: \(path)", hint: "create it, or fix secrets.\(s.name).file", at: at) }
                    value = try ctx.fs.readData(path)
                } else if let variable = s.environment {
                    guard let v = ctx.environment[variable] else {
                        throw SoError("secret '\(s.name)' comes from the environment variable \(variable), which is not set", hint: "export \(variable) before start", at: at)
                    }
                    value = Data(v.utf8)
                } else if let content = s.content {
                    value = Data(content.utf8)
                } else {
                    throw SoError("secret '\(s.name)' has no file, environment or content", hint: "give it file: PATH or environment: VAR", at: at)
                }
                let name = ComposeResourceNames.secret(model.id, s.name)
                if out.contains(where: { $0.name == name }) { continue }
                out.append(KubeObject(apiVersion: "v1", kind: "Secret", name: name, namespace: namespace,
                                      labels: DeploymentNames.hostSecretLabels(model),
                                      body: [("type", .string("Opaque")), ("data", .map([(ComposeResourceNames.key, .string(value.base64EncodedString()))]))]))
            }
        }
        return out
    }
}
