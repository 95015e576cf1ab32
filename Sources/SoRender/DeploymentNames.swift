import SoStack
import SoKube

/// The names of a deployment's objects that more than one place needs (render, start, stop, rotate):
/// written once, here.
public enum DeploymentNames {
    /// The Secret holding `$generate` values, `secret-env` copies and credentials-file values.
    public static func generatedSecrets(_ id: String) -> String { "\(id)-generated-secrets" }
    /// The dockerconfigjson Secret made from the spec's `image-pull-secret`.
    public static func imagePullSecret(_ id: String) -> String { "\(id)-image-pull-secret" }

    /// Labels of the Secrets start makes from host values (what prune and stop select them by).
    public static func hostSecretLabels(_ model: DeploymentModel) -> [(String, String)] {
        [("app", model.id), ("app.kubernetes.io/stack", KubeNames.labelValue(model.stackName)),
         ("app.kubernetes.io/instance", model.id), ("app.kubernetes.io/managed-by", "so")]
    }
}
