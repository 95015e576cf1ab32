import Foundation
import SoBasics
import SoKube
import SoStack
import SoRender

/// spec `image-pull-secret: {server, username, token-env?, token-file?}` → the `<id>-image-pull-secret`
/// Secret (type `kubernetes.io/dockerconfigjson`) the pods name in `imagePullSecrets`, made at each start as
/// laconic-so makes it: the token file wins over the environment variable. The token is read from the
/// host and goes only into the Secret — never to disk, stdout or the rendered manifest.
struct ImagePullSecretObject {
    let ctx: SoContext
    let model: DeploymentModel
    let namespace: String


    func object() throws -> KubeObject? {
        guard let spec = model.spec.sections.imagePullSecret else { return nil }
        let at = SourceLocation(file: model.spec.path, line: spec.line)
        var token: String?
        if let file = spec.tokenFile {
            let path = Path.absolute(Path.expandTilde(file, home: ctx.fs.homeDirectory), relativeTo: Path.dirname(model.spec.path))
            if ctx.fs.isFile(path) { token = try ctx.fs.readText(path).trimmedWhitespace }
            else if spec.tokenEnv == nil { throw SoError("image-pull-secret token-file not found: \(path)", hint: "create it, or name the token with token-env", at: at) }
        }
        if token == nil, let variable = spec.tokenEnv {
            guard let v = ctx.environment[variable], !v.isEmpty else {
                throw SoError("image-pull-secret token comes from \(variable), which is not set", hint: "export \(variable) before start, or give token-file", at: at)
            }
            token = v
        }
        guard let token else { return nil }
        let auth = Data("\(spec.username):\(token)".utf8).base64EncodedString()
        let config: YValue = .map([("auths", .map([(spec.server, .map([("username", .string(spec.username)), ("password", .string(token)), ("auth", .string(auth))]))]))])
        return KubeObject(apiVersion: "v1", kind: "Secret", name: DeploymentNames.imagePullSecret(model.id), namespace: namespace,
                          labels: DeploymentNames.hostSecretLabels(model),
                          body: [("type", .string("kubernetes.io/dockerconfigjson")),
                                 ("data", .map([(".dockerconfigjson", .string(Data(config.compactJSON()).base64EncodedString()))]))])
    }
}
