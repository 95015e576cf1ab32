import SoBasics
import SoKube
import SoStack

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

    /// The label keys `so` writes and reads (Kubernetes' recommended set, plus the stack's).
    public enum Label {
        public static let name = "app.kubernetes.io/name"
        public static let instance = "app.kubernetes.io/instance"
        public static let component = "app.kubernetes.io/component"
        public static let stack = "app.kubernetes.io/stack"
        public static let managedBy = "app.kubernetes.io/managed-by"
        /// What marks an object as made by `so`: `managed-by=so`.
        public static let managedBySo = (managedBy, "so")
        /// The selector of everything `so` made on a cluster.
        public static let managedBySoSelector = "\(managedBy)=so"
    }

    /// The Namespace's annotations `so` keeps about a deployment's runs.
    public enum Annotation {
        public static let startedAt = "so.dev/started-at"
        public static let host = "so.dev/host"
        public static let expiresAt = "so.dev/expires-at"
        /// The kinds start applied, for prune.
        public static let kinds = "so.dev/kinds"
        /// On placeholder Secrets of `render`: what the values are made from.
        public static let placeholder = "so.dev/placeholder"
        /// On a namespace `so` created (set by its create only, never applied): `so` may delete it whole.
        public static let madeBy = "so.dev/made-by"
        public static let madeBySo = "so"
        /// A workspace with `idle:` (seconds), and where its checkout is ("CONTAINER PATH"): what
        /// `so cleanup --idle` reads, with no deployment directory at hand.
        public static let idleAfter = "so.dev/idle-after"
        public static let workspace = "so.dev/workspace"
        /// When a verb last used the workspace's container (shell, exec, task …).
        public static let lastUsed = "so.dev/last-used"
        /// Set by `so cleanup --idle` when it stopped the workspace; the next verb that needs it starts it.
        public static let idleStopped = "so.dev/idle-stopped"
        /// A warm pool's member not claimed yet: the pool's name.
        public static let pool = "so.dev/pool"
        /// A warm pool's member that was claimed: the pool's name.
        public static let claimedFrom = "so.dev/claimed-from"
        /// The containers the last start's wait believed running ("POD-UID/CONTAINER#RESTARTS", comma-separated):
        /// the next start believes them at once while they are the same start (`ContainerEvidence`).
        public static let believed = "so.dev/believed"
    }

    /// Labels on every rendered object: laconic-so's `app`, plus the recommended app.kubernetes.io set.
    public static func labels(_ model: DeploymentModel) -> [(String, String)] {
        [
            ("app", model.id), (Label.stack, NameRules.labelValue(model.stackName)),
            (Label.name, NameRules.labelValue(model.stackName)),
            (Label.instance, model.id), Label.managedBySo,
        ]
    }

    /// Labels of the Secrets made from host values (generated, compose, image-pull): what prune and stop
    /// select them by. They lack `app.kubernetes.io/name`, as every start so far applied them (adding it
    /// would change every such Secret once); placeholders in `render --placeholder-secrets` carry `labels`.
    public static func hostSecretLabels(_ model: DeploymentModel) -> [(String, String)] {
        labels(model).filter { $0.0 != Label.name }
    }

    /// Labels of the objects start makes that render does not (the lock's Lease): enough for stop to
    /// delete them and for prune to leave them alone.
    public static func controlLabels(_ id: String) -> [(String, String)] {
        [("app", id), (Label.instance, id), Label.managedBySo]
    }
    /// Whether the Namespace `ns` (as read) is deployment `id`'s, whichever directory started it last: another
    /// machine's directory of the same deployment (made from its record in the cluster) owns it too.
    public static func sameDeployment(_ ns: JSON, _ id: String) -> Bool {
        ns.labels[Label.instance] == id && ns.labels[Label.managedBy] == "so"
    }
    /// The selector of the deployment's pods and workloads, whatever made them: what the waits read.
    public static func instanceSelector(_ id: String) -> String { "\(Label.instance)=\(id)" }

    /// The selector of everything a deployment labels (laconic-so's `app`): what stop deletes.
    public static func selector(_ id: String) -> String { "app=\(id)" }
    /// The selector of the objects `so` applied for a deployment: what start lists to prune.
    public static func ownedSelector(_ id: String) -> String { "\(Label.instance)=\(id),\(Label.managedBySoSelector)" }
}
