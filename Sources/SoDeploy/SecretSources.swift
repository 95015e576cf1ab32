import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// The values of the Secrets start makes from host values, gathered here and handed to render
/// (`Renderer.adding`, `Renderer.secretObjects`), which builds the objects:
/// - `<id>-generated-secrets`: `$generate` values made once with the context's entropy and kept across
///   start, restart, update and re-apply (read back from the Secret the cluster holds); `secret-env`
///   values copied from the host environment; credentials-file values read from their files;
/// - compose `secrets:` from their source (see `composeValues`);
/// - the spec's `image-pull-secret` token (see `ImagePullToken`).
/// Values never reach stdout, logs or files: `SecretValue` prints as `<secret>`.
struct SecretSources {
    let ctx: SoContext
    let model: DeploymentModel
    /// A warm pool's member: its `secret-env` is left out (no one's credentials until a claim hands in the
    /// claimer's, `PoolClaim`), and not warned of.
    var withholdSecretEnv = false

    /// Whether the deployment has a generated-secrets Secret.
    var hasGenerated: Bool { !model.secretKeys.isEmpty }

    /// Every value start needs. `stored`: the generated-secrets Secret as the cluster holds it; `rotate`: keys
    /// to make anew. Returns the keys made anew too.
    /// `make` false: values to be made are named in `madeNow` but left empty (no entropy drawn; the caller makes
    /// them later, once).
    func values(stored: JSON?, rotate: Set<String> = [], make: Bool = true) throws -> (
        values: SecretValues, madeNow: [String]
    ) {
        var values = SecretValues(
            compose: try composeValues(), imagePullToken: try ImagePullToken(ctx: ctx, model: model).value())
        var madeNow: [String] = []
        if hasGenerated {
            let g = try generatedValues(stored: stored, rotate: rotate, make: make)
            values.generated = g.values
            madeNow = g.generated
        }
        return (values, madeNow)
    }

    /// The generated-secrets data, from what the cluster already holds; `rotate` lists keys to make anew.
    func generatedValues(stored: JSON?, rotate: Set<String> = [], make: Bool = true)
        throws -> (values: [(key: String, value: SecretValue)], generated: [String], copied: [String])
    {
        let current = (stored?["data"]?.object ?? [:]).compactMapValues { $0.string }
        var data: [(key: String, value: SecretValue)] = []
        var generated: [String] = []
        var copied: [String] = []
        for entry in model.spec.config {
            guard let token = entry.token else { continue }
            if let value = current[entry.key], !rotate.contains(entry.key) {
                data.append((entry.key, SecretValue(base64: value)))
            } else {
                data.append((entry.key, SecretValue(text: make ? token.generate(using: ctx.entropy) : "")))
                generated.append(entry.key)
            }
        }
        var unset: [String] = []
        for key in model.spec.secretEnv where !withholdSecretEnv && !data.contains(where: { $0.key == key }) {
            if let value = ctx.environment[key] {
                data.append((key, SecretValue(text: value)))
                copied.append(key)
            } else if let value = current[key] {
                data.append((key, SecretValue(base64: value)))
            } else {
                unset.append(key)
            }
        }
        // Credentials files: read now, straight into the Secret (later files win, as later config.env lines did).
        for file in model.credentialsFiles {
            guard ctx.fs.isFile(file.path) else {
                throw SoError(
                    "credentials file not found: \(file.path)",
                    hint:
                        "restore it, or remove it from the spec's credentials-files and run 'so deploy create --update'",
                    at: SourceLocation(file: model.spec.path))
            }
            let pairs = try DotEnv.parse(try ctx.fs.readText(file.path, what: "credentials file"), file: file.path)
            for key in file.keys {
                guard let value = pairs.last(where: { $0.key == key })?.value else {
                    ctx.diagnostics.warn(
                        "credentials file \(file.path) no longer holds \(key); containers get no value for it",
                        hint: "add it back, or run 'so deploy create --update' to refresh the deployment",
                        at: SourceLocation(file: model.spec.path))
                    data.removeAll { $0.key == key }
                    continue
                }
                data.removeAll { $0.key == key }
                data.append((key, SecretValue(text: value)))
                copied.append(key)
            }
        }
        if !unset.isEmpty {
            let message =
                "secret-env \(unset.joined(separator: ", ")) \(unset.count == 1 ? "is" : "are") not set in the environment; "
                + "containers get no value for \(unset.count == 1 ? "it" : "them")"
            ctx.diagnostics.warn(
                message,
                hint: "export \(unset.count == 1 ? unset[0] : "the ones you need") before 'so deployment start'",
                at: SourceLocation(file: model.spec.path))
        }
        return (data, generated, copied)
    }

    /// Compose `secrets:` values, read at each start from their source: the file next to the stack's own
    /// compose file (never copied into the deployment directory), a host environment variable, or inline
    /// content. Keyed by the compose secret's name (the first source of a name wins).
    func composeValues() throws -> [String: SecretValue] {
        let used = Renderer.composeSecrets(model)
        guard !used.isEmpty else { return [:] }
        let stack = try ctx.locator.resolve(
            model.spec.stack, relativeTo: [model.directory, Path.dirname(model.spec.path)],
            diagnostics: .dropped("deploy create warned about the stack; start reads it for secret sources"))
        let sources = try stack.pods(with: model.spec.with, at: nil) + stack.jobs
        var out: [String: SecretValue] = [:]
        for secret in used {
            let (c, s) = (secret.component, secret.declared)
            let sourceDir =
                sources.first { $0.name == c.name }.map { Path.dirname($0.composePath) } ?? c.compose.directory
            let at = SourceLocation(file: c.compose.path, line: s.line)
            let value: Data
            if let file = s.file {
                let path = Path.absolute(Path.expandTilde(file, home: ctx.fs.homeDirectory), relativeTo: sourceDir)
                guard ctx.fs.isFile(path) else {
                    throw SoError(
                        "secret '\(s.name)' file not found: \(path)", hint: "create it, or fix secrets.\(s.name).file",
                        at: at)
                }
                value = try ctx.fs.readData(path)
            } else if let variable = s.environment {
                guard let v = ctx.environment[variable] else {
                    throw SoError(
                        "secret '\(s.name)' comes from the environment variable \(variable), which is not set",
                        hint: "export \(variable) before start", at: at)
                }
                value = Data(v.utf8)
            } else if let content = s.content {
                value = Data(content.utf8)
            } else {
                throw SoError(
                    "secret '\(s.name)' has no file, environment or content",
                    hint: "give it file: PATH or environment: VAR", at: at)
            }
            if out[s.name] == nil { out[s.name] = SecretValue(bytes: value) }
        }
        return out
    }
}
