import SoBasics
import SoKube

/// A team's `so dashboard` running in the cluster under a service account: the cluster-wide role it has only lists
/// and watches what `so` labels; what it reads inside a deployment's namespace (Secrets to redact with, `pods/exec`
/// for task reports) it has through the RoleBinding `so` renders into each namespace it manages, to the ClusterRole
/// `clusterRole` (examples/dashboard/so-dashboard.yml defines it).
public struct DashboardReader: Sendable, Equatable {
    public var namespace: String
    public var serviceAccount: String

    public static let clusterRole = "so-dashboard-namespace"
    public static let bindingName = "so-dashboard-reader"
    public static let variable = "SO_DASHBOARD_ACCOUNT"

    public init(namespace: String, serviceAccount: String) {
        self.namespace = namespace
        self.serviceAccount = serviceAccount
    }

    /// `NAMESPACE/SERVICEACCOUNT` (SO_DASHBOARD_ACCOUNT's value); empty or absent: nil.
    public static func parse(_ value: String?) throws -> DashboardReader? {
        guard let value, !value.isEmpty else { return nil }
        let parts = value.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, NameRules.isDNSLabel(parts[0]), NameRules.isDNSSubdomain(parts[1]) else {
            throw SoError.usage(
                "\(variable) '\(value)' is not NAMESPACE/SERVICEACCOUNT",
                hint: "the dashboard's service account, e.g. so-dashboard/so-dashboard (examples/dashboard)")
        }
        return DashboardReader(namespace: parts[0], serviceAccount: parts[1])
    }

    /// The RoleBinding in `namespace`, labelled as the deployment's other objects.
    func binding(namespace: String, labels: [(String, String)]) -> KubeObject {
        KubeObject(
            apiVersion: ResourceType.roleBinding.apiVersion, kind: ResourceType.roleBinding.kind,
            name: Self.bindingName,
            namespace: namespace, labels: labels,
            body: [
                (
                    "roleRef",
                    .map([
                        ("apiGroup", .string("rbac.authorization.k8s.io")), ("kind", .string("ClusterRole")),
                        ("name", .string(Self.clusterRole)),
                    ])
                ),
                (
                    "subjects",
                    .list([
                        .map([
                            ("kind", .string("ServiceAccount")), ("name", .string(serviceAccount)),
                            ("namespace", .string(self.namespace)),
                        ])
                    ])
                ),
            ])
    }
}
