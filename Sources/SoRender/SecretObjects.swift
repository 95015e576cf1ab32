import Foundation
import SoBasics
import SoCompose
import SoKube
import SoStack

extension Renderer {
    /// Every object, the Secrets made of `secrets` among them (in place of any placeholders). Nil
    /// `secrets` renders exactly what `render(_:options:)` renders: no value ever appears.
    public static func render(
        _ model: DeploymentModel, options: RenderOptions = RenderOptions(), secrets: SecretValues?
    ) throws -> Manifest {
        var manifest = try render(model, options: options)
        if let secrets { manifest.objects = try adding(secrets, to: manifest.objects, model: model) }
        return manifest
    }

    /// `objects` with the Secrets made of `values` right after the Namespace (where start applies them),
    /// replacing objects of the same name (placeholders).
    public static func adding(_ values: SecretValues, to objects: [KubeObject], model: DeploymentModel) throws
        -> [KubeObject]
    {
        let secrets = try secretObjects(model, values)
        var out = objects.filter { o in !(o.isKind(.secret) && secrets.contains { $0.name == o.name }) }
        out.insert(contentsOf: secrets, at: out.firstIndex { !$0.isKind(.namespace) } ?? out.count)
        return out
    }

    /// The Secrets made of host values, in apply order: compose secrets, the image-pull Secret, the
    /// generated-secrets Secret.
    public static func secretObjects(_ model: DeploymentModel, _ values: SecretValues) throws -> [KubeObject] {
        let namespace = namespace(of: model)
        let labels = DeploymentNames.hostSecretLabels(model)
        var out: [KubeObject] = []
        for secret in composeSecrets(model) {
            let (name, source) = (secret.name, secret.source)
            guard let value = values.compose[source] else {
                throw SoError(
                    "no value for compose secret '\(source)'",
                    hint: "this is a bug in so: start gathers every compose secret a service uses")
            }
            out.append(
                KubeObject(
                    .secret, name: name, namespace: namespace, labels: labels,
                    body: [
                        ("type", .string("Opaque")),
                        ("data", .map([(ComposeResourceNames.key, .string(value.base64))])),
                    ]))
        }
        if let token = values.imagePullToken?.text, let spec = model.spec.sections.imagePullSecret {
            let auth = Data("\(spec.username):\(token)".utf8).base64EncodedString()
            let config: YValue = .map([
                (
                    "auths",
                    .map([
                        (
                            spec.server,
                            .map([
                                ("username", .string(spec.username)), ("password", .string(token)),
                                ("auth", .string(auth)),
                            ])
                        )
                    ])
                )
            ])
            out.append(
                KubeObject(
                    .secret, name: DeploymentNames.imagePullSecret(model.id), namespace: namespace, labels: labels,
                    body: [
                        ("type", .string("kubernetes.io/dockerconfigjson")),
                        (
                            "data",
                            .map([(".dockerconfigjson", .string(Data(config.compactJSON()).base64EncodedString()))])
                        ),
                    ]))
        }
        if let data = values.generated {
            out.append(
                KubeObject(
                    .secret, name: DeploymentNames.generatedSecrets(model.id), namespace: namespace, labels: labels,
                    annotations: [("so.dev/generated-secrets", "true")],
                    body: [
                        ("type", .string("Opaque")), ("data", .map(data.map { ($0.key, .string($0.value.base64)) })),
                    ]))
        }
        return out
    }

    /// A compose secret some service uses, with the compose file it is declared in.
    public struct ComposeSecret: Sendable {
        /// The Secret's name (`ComposeResourceNames.secret`).
        public var name: String
        /// The compose secret as declared (`file:`, `environment:` or `content:`).
        public var declared: ComposeTopLevelResource
        public var component: ComposeComponent
        /// The compose secret's name: what `SecretValues.compose` is keyed by.
        public var source: String { declared.name }
    }

    /// The compose secrets services use, once each, not `external` (those exist already), in the order of
    /// pods, jobs and their `secrets:` (the first of a name wins). The one filter: render's placeholders,
    /// the Secrets start makes and the values it reads all come from this list.
    public static func composeSecrets(_ model: DeploymentModel) -> [ComposeSecret] {
        var out: [ComposeSecret] = []
        for c in model.pods + model.jobs {
            let used = Set(c.compose.services.flatMap(\.secrets).map(\.source))
            for s in c.compose.secrets where used.contains(s.name) && !s.external {
                let name = ComposeResourceNames.secret(model.id, s.name)
                if !out.contains(where: { $0.name == name }) {
                    out.append(ComposeSecret(name: name, declared: s, component: c))
                }
            }
        }
        return out
    }
}
