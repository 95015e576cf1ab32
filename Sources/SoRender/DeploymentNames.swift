import SoStack
import SoKube

/// The names and labels of a deployment's objects that more than one place needs (render, start, stop,
/// rotate): written once, here.
public enum DeploymentNames {
    /// The Secret holding `$generate` values, `secret-env` copies and credentials-file values.
    public static func generatedSecrets(_ id: String) -> String { "\(id)-generated-secrets" }
    /// The dockerconfigjson Secret made from the spec's `image-pull-secret`.
    public static func imagePullSecret(_ id: String) -> String { "\(id)-image-pull-secret" }
    /// The Namespace's annotation naming the deployment directory that owns it (laconic-so's): what start
    /// and stop check before they touch a namespace, and what `deployment list` reads.
    public static let directoryAnnotation = "laconic.com/deployment-dir"

    /// Labels on every rendered object: laconic-so's `app`, plus the recommended app.kubernetes.io set.
    public static func labels(_ model: DeploymentModel) -> [(String, String)] {
        [("app", model.id), ("app.kubernetes.io/stack", KubeNames.labelValue(model.stackName)),
         ("app.kubernetes.io/name", KubeNames.labelValue(model.stackName)),
         ("app.kubernetes.io/instance", model.id), ("app.kubernetes.io/managed-by", "so")]
    }

    /// Labels of the Secrets made from host values (generated, compose, image-pull): what prune and stop
    /// select them by. They lack `app.kubernetes.io/name`, as every start so far applied them (adding it
    /// would change every such Secret once); placeholders in `render --placeholder-secrets` carry `labels`.
    public static func hostSecretLabels(_ model: DeploymentModel) -> [(String, String)] {
        labels(model).filter { $0.0 != "app.kubernetes.io/name" }
    }

    /// Labels of the objects start makes that render does not (the lock's Lease): enough for stop to
    /// delete them and for prune to leave them alone.
    public static func controlLabels(_ id: String) -> [(String, String)] {
        [("app", id), ("app.kubernetes.io/instance", id), ("app.kubernetes.io/managed-by", "so")]
    }
    /// The selector of the deployment's pods and workloads, whatever made them: what the waits read.
    public static func instanceSelector(_ id: String) -> String { "app.kubernetes.io/instance=\(id)" }

    /// The selector of everything a deployment labels (laconic-so's `app`): what stop deletes.
    public static func selector(_ id: String) -> String { "app=\(id)" }
    /// The selector of the objects `so` applied for a deployment: what start lists to prune.
    public static func ownedSelector(_ id: String) -> String { "app.kubernetes.io/instance=\(id),app.kubernetes.io/managed-by=so" }
}
