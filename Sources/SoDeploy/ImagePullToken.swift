import Foundation
import SoActions
import SoBasics
import SoRender
import SoStack

/// The token of the spec's `image-pull-secret: {server, username, token-env?, token-file?}`, read from the
/// host at each start as laconic-so reads it: the token file wins over the environment variable. Render
/// makes the `<id>-image-pull-secret` Secret (type `kubernetes.io/dockerconfigjson`) of it, which the pods
/// name in `imagePullSecrets`. The token goes only into that Secret — never to disk, stdout or `render`.
struct ImagePullToken {
    let ctx: SoContext
    let model: DeploymentModel

    func value() throws -> SecretValue? {
        guard let spec = model.spec.sections.imagePullSecret else { return nil }
        let at = SourceLocation(file: model.spec.path, line: spec.line)
        var token: String?
        if let file = spec.tokenFile {
            let path = Path.absolute(
                Path.expandTilde(file, home: ctx.fs.homeDirectory), relativeTo: Path.dirname(model.spec.path))
            if ctx.fs.isFile(path) {
                token = try ctx.fs.readText(path).trimmedWhitespace
            } else if spec.tokenEnv == nil {
                throw SoError(
                    "image-pull-secret token-file not found: \(path)",
                    hint: "create it, or name the token with token-env", at: at)
            }
        }
        if token == nil, let variable = spec.tokenEnv {
            guard let v = ctx.environment[variable], !v.isEmpty else {
                throw SoError(
                    "image-pull-secret token comes from \(variable), which is not set",
                    hint: "export \(variable) before start, or give token-file", at: at)
            }
            token = v
        }
        return token.map { SecretValue(text: $0) }
    }
}
