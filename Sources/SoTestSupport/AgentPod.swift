import SoKube

/// A workspace's agent pod as the fake cluster shows it once its container runs.
public enum AgentPod {
    public static func running(id: String, namespace: String, name: String? = nil) -> KubeObject {
        KubeObject(
            apiVersion: "v1", kind: "Pod", name: name ?? "\(id)-agent-abc", namespace: namespace, labels: [("app", id)],
            body: [
                ("spec", .map([("containers", .list([.map([("name", .string("agent"))])]))])),
                (
                    "status",
                    .map([
                        ("phase", .string("Running")),
                        (
                            "containerStatuses",
                            .list([.map([("name", .string("agent")), ("state", .map([("running", .map([]))]))])])
                        ),
                    ])
                ),
            ])
    }
}
