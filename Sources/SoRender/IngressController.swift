import SoBasics
import SoKube

/// The Caddy ingress controller `so` installs once per kind cluster (laconic-so's §8.4 layout, so a
/// cluster laconic-so set up is recognised and kept): namespace `caddy-system`, RBAC, the controller's
/// ConfigMap, a default IngressClass `caddy`, and a Deployment with hostPorts 80/443 on the node kind
/// labels `ingress-ready=true`. Pure: the image and ACME email come in as arguments.
public enum IngressController {
    public static let namespace = "caddy-system"
    public static let deploymentName = "caddy-ingress-controller"
    public static let defaultImage = "ghcr.io/laconicnetwork/caddy-ingress:latest"
    static let configMapName = "caddy-ingress-controller-configmap"
    static let labels: [(String, String)] = [
        (DeploymentNames.Label.name, deploymentName), DeploymentNames.Label.managedBySo,
    ]

    /// The ServiceAccount the controller runs as: named as its Deployment.
    static let serviceAccount = deploymentName
    /// The name of the controller's ClusterRole and of its binding.
    static let clusterRoleName = "so:caddy-ingress-controller"

    public static func objects(image: String?, acmeEmail: String?) -> [KubeObject] {
        [
            KubeObject(.namespace, name: namespace, labels: labels),
            object("ServiceAccount", "v1", serviceAccount, []),
            clusterRole(),
            clusterRoleBinding(),
            configMap(acmeEmail: acmeEmail),
            ingressClass(),
            deployment(image: image),
        ]
    }

    /// One object of the controller, with its labels, in its namespace unless `namespaced` is false.
    static func object(
        _ kind: String, _ apiVersion: String, _ name: String, namespaced: Bool = true,
        annotations: [(String, String)] = [],
        _ body: [(String, YValue)]
    ) -> KubeObject {
        KubeObject(
            apiVersion: apiVersion, kind: kind, name: name, namespace: namespaced ? namespace : nil, labels: labels,
            annotations: annotations,
            body: body)
    }

    /// The ClusterRole: full access to ingresses, their secrets and leases; read access to what they route to.
    static func clusterRole() -> KubeObject {
        let s = YValue.string
        let rules: YValue = .list([
            .map([
                ("apiGroups", .list([s(""), s("networking.k8s.io"), s("coordination.k8s.io")])),
                ("resources", .list(["ingresses", "ingresses/status", "secrets", "leases"].map(s))),
                ("verbs", .list([s("*")])),
            ]),
            .map([
                ("apiGroups", .list([s(""), s("discovery.k8s.io")])),
                ("resources", .list(["services", "endpointslices", "pods", "nodes", "configmaps"].map(s))),
                ("verbs", .list(["get", "list", "watch"].map(s))),
            ]),
        ])
        return object(
            "ClusterRole", "rbac.authorization.k8s.io/v1", clusterRoleName, namespaced: false, [("rules", rules)])
    }

    /// The ClusterRoleBinding that grants the ClusterRole to the controller's ServiceAccount.
    static func clusterRoleBinding() -> KubeObject {
        let s = YValue.string
        return object(
            "ClusterRoleBinding", "rbac.authorization.k8s.io/v1", clusterRoleName, namespaced: false,
            [
                (
                    "roleRef",
                    .map([
                        ("apiGroup", s("rbac.authorization.k8s.io")), ("kind", s("ClusterRole")),
                        ("name", s(clusterRoleName)),
                    ])
                ),
                (
                    "subjects",
                    .list([
                        .map([("kind", s("ServiceAccount")), ("name", s(serviceAccount)), ("namespace", s(namespace))])
                    ])
                ),
            ])
    }

    /// The controller's ConfigMap: Let's Encrypt as the ACME CA, with the ACME email when there is one.
    static func configMap(acmeEmail: String?) -> KubeObject {
        let s = YValue.string
        var config: [(String, YValue)] = [
            ("acmeCA", s("https://acme-v02.api.letsencrypt.org/directory")), ("debug", s("false")),
        ]
        if let acmeEmail { config.append(("email", s(acmeEmail))) }
        return object("ConfigMap", "v1", configMapName, [("data", .map(config))])
    }

    /// The IngressClass `caddy`, the cluster's default.
    static func ingressClass() -> KubeObject {
        object(
            "IngressClass", "networking.k8s.io/v1", Defaults.ingressClass, namespaced: false,
            annotations: [("ingressclass.kubernetes.io/is-default-class", "true")],
            [("spec", .map([("controller", .string("caddy.io/ingress-controller"))]))])
    }

    /// The controller's Deployment: one replica, replaced (not rolled) on change, on the ingress-ready node.
    static func deployment(image: String?) -> KubeObject {
        let s = YValue.string
        let selector: YValue = .map([(DeploymentNames.Label.name, s(deploymentName))])
        return object(
            "Deployment", "apps/v1", deploymentName,
            [
                (
                    "spec",
                    .map([
                        ("replicas", .int(1)),
                        ("strategy", .map([("type", s("Recreate"))])),
                        ("selector", .map([("matchLabels", selector)])),
                        (
                            "template",
                            .map([("metadata", .map([("labels", selector)])), ("spec", podSpec(image: image))])
                        ),
                    ])
                )
            ])
    }

    /// The controller's pod spec: pinned to the node kind labels `ingress-ready=true`, control plane tolerated.
    static func podSpec(image: String?) -> YValue {
        let s = YValue.string
        return .map([
            ("serviceAccountName", s(serviceAccount)),
            ("nodeSelector", .map([("ingress-ready", s("true"))])),
            (
                "tolerations",
                .list([
                    .map([
                        ("key", s("node-role.kubernetes.io/control-plane")),
                        ("operator", s("Exists")),
                        ("effect", s("NoSchedule")),
                    ])
                ])
            ),
            ("containers", .list([container(image: image)])),
            ("volumes", .list([.map([("name", s("data")), ("emptyDir", .map([]))])])),
        ])
    }

    /// The controller's container: hostPorts 80/443, metrics and health on 9765, its data in an emptyDir.
    static func container(image: String?) -> YValue {
        let s = YValue.string
        let env: YValue = .list(
            ["POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"].sorted { $0.key < $1.key }.map {
                k, v in
                .map([("name", s(k)), ("valueFrom", .map([("fieldRef", .map([("fieldPath", s(v))]))]))])
            })
        let probe: YValue = .map([
            ("httpGet", .map([("path", s("/healthz")), ("port", .int(9765))])), ("initialDelaySeconds", .int(3)),
            ("periodSeconds", .int(10)),
        ])
        return .map([
            ("name", s(deploymentName)), ("image", s(image ?? defaultImage)), ("imagePullPolicy", s("IfNotPresent")),
            ("args", .list([s("-config-map=\(configMapName)"), s("-class-name=\(Defaults.ingressClass)")])),
            ("env", env),
            (
                "ports",
                .list(
                    [("http", 80), ("https", 443), ("metrics", 9765)].map { n, p in
                        .map(
                            [("name", s(n)), ("containerPort", .int(p))] + (p == 9765 ? [] : [("hostPort", .int(p))])
                                + [("protocol", s("TCP"))])
                    })
            ),
            ("readinessProbe", probe), ("livenessProbe", probe),
            (
                "resources",
                .map([
                    ("requests", .map([("cpu", s("50m")), ("memory", s("64Mi"))])),
                    ("limits", .map([("cpu", s("1")), ("memory", s("512Mi"))])),
                ])
            ),
            ("volumeMounts", .list([.map([("name", s("data")), ("mountPath", s("/data"))])])),
        ])
    }
}
