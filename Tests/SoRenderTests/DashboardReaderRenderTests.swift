import Foundation
import SoBasics
import SoKube
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoRender

/// A team's dashboard in the cluster reads a deployment's Secrets and runs `pods/exec` only where `so` bound its
/// service account (SO_DASHBOARD_ACCOUNT): one RoleBinding in the deployment's namespace, before any pod; without
/// the variable, nothing rendered changes.
@Suite struct DashboardReaderRenderTests {
    func model(_ body: (DeploymentModel) throws -> Void) throws {
        let t = try TempDir("so-dashboard-reader-render")
        defer { t.cleanup() }
        try t.write("deployment.yml", "cluster-id: laconic-c\ndeployment-id: laconic-d\n")
        try t.write("stack.yml", "name: s\npods: [p]\n")
        try t.write("spec.yml", "stack: /x/stacks/s\ndeploy-to: k8s-kind\n")
        try t.write("compose/docker-compose-p.yml", "services:\n  app:\n    image: x\n")
        try body(
            try DeploymentLoader.load(
                t.path, fs: LocalFileSystem(), diagnostics: DiagnosticSink(), displayDirectory: "/d"))
    }

    @Test func theNamespaceBindsTheDashboardsAccountToTheNamespaceRole() throws {
        try model { m in
            var options = RenderOptions()
            options.dashboardAccount = try DashboardReader.parse("so-dashboard/so-dashboard")
            let manifest = try Renderer.render(m, options: options)
            let names = manifest.objects.prefix(2).map { "\($0.kind)/\($0.namespace ?? "")/\($0.name)" }
            #expect(names == ["Namespace//laconic-d", "RoleBinding/laconic-d/so-dashboard-reader"], "\(names)")
            let binding = try #require(manifest.objects.first { $0.kind == "RoleBinding" })
            #expect(
                binding.yaml() == """
                    apiVersion: rbac.authorization.k8s.io/v1
                    kind: RoleBinding
                    metadata:
                      name: so-dashboard-reader
                      namespace: laconic-d
                      labels:
                        app: laconic-d
                        app.kubernetes.io/stack: s
                        app.kubernetes.io/name: s
                        app.kubernetes.io/instance: laconic-d
                        app.kubernetes.io/managed-by: so
                    roleRef:
                      apiGroup: rbac.authorization.k8s.io
                      kind: ClusterRole
                      name: so-dashboard-namespace
                    subjects:
                      - kind: ServiceAccount
                        name: so-dashboard
                        namespace: so-dashboard

                    """)
            #expect(try !Renderer.render(m).objects.contains { $0.kind == "RoleBinding" }, "not asked: not rendered")
        }
    }

    @Test func anAccountThatIsNotNamespaceSlashNameIsRefused() throws {
        #expect(try DashboardReader.parse(nil) == nil && DashboardReader.parse("") == nil)
        for bad in ["so-dashboard", "a/b/c", "/x", "NS/sa", "ns/", "ns/sa name"] {
            let e = try #require(throws: SoError.self, performing: { try DashboardReader.parse(bad) })
            #expect(e.message == "SO_DASHBOARD_ACCOUNT '\(bad)' is not NAMESPACE/SERVICEACCOUNT" && e.exitCode == 64)
        }
    }
}
