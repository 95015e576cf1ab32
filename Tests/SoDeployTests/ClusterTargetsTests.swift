import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// One cluster-selection rule for every verb: flags > the deployment's own > SO_KUBECONFIG > the host's
/// kind cluster > the current context of $KUBECONFIG; nothing answering is one error naming all of it.
@Suite struct ClusterSelectionTests {
    static func kubeconfig(context: String, server: String = "https://127.0.0.1:6443") -> String {
        ClusterHarness.kubeconfigText.replacingOccurrences(of: "kind-test", with: context).replacingOccurrences(
            of: "https://127.0.0.1:6443", with: server)
    }

    @Test func theUsersCurrentContextIsTheLastResort() async throws {
        let c = try await ClusterHarness()
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        // No kind installed (the harness's default): status and list reach $KUBECONFIG's current context.
        let status = try await ObserveAction(c.ctx).status(
            "dep", cluster: ClusterOptions(performClusterManagement: false))
        #expect(status.cluster.contains("prod"), "\(status.cluster)")
        _ = try await ListAction(c.ctx).run(cluster: ClusterOptions(performClusterManagement: false))
    }

    /// In a pod with no kubeconfig: its service account, as kubectl; kubectl is then given no flags (it finds the account itself).
    @Test func thePodsServiceAccountWhenNothingElseWasChosen() async throws {
        let c = try await ClusterHarness(environment: [
            "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
        ])
        var env = c.ctx.environment
        env["SO_SERVICEACCOUNT_DIR"] = c.h.tmp.file("sa")
        var ctx = c.ctx
        ctx.environment = env
        await #expect {
            _ = try await ClusterTargets(ctx: ctx).shared(ClusterOptions(performClusterManagement: false))
        } throws: { e in
            (e as? SoError)?.message.contains("the pod's service account (no token at \(c.h.tmp.file("sa/token")))")
                == true
        }
        try c.h.tmp.write("sa/token", "pod-token")
        try c.h.tmp.write("sa/namespace", "ci")
        let model = try RenderAction(ctx).model("dep")
        let target = try await ClusterTargets(ctx: ctx).find(
            model, ClusterOptions(performClusterManagement: false), allowCreate: false)
        #expect(
            target?.connection.inCluster == true && target?.connection.server == "https://10.96.0.1:443"
                && target?.connection.namespace == "ci")
        #expect(target?.kubectlFlags == [])
        // A kubeconfig, once there, comes first (kubectl's order).
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        #expect(
            try await ClusterTargets(ctx: ctx).shared(ClusterOptions(performClusterManagement: false)).connection
                .contextName == "prod")
    }

    @Test func soKubeconfigComesAfterTheDeploymentsOwnKindCluster() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/nonexistent/ci-kubeconfig"])
        let clusterID = try DeploymentFile.load(
            c.h.path("dep/deployment.yml"), fs: c.h.fs, diagnostics: DiagnosticSink()
        ).clusterID
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "kind-\(clusterID)"))
        let target = try await ClusterTargets(ctx: c.ctx).find(
            try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false), allowCreate: false)
        #expect(target?.kindCluster == clusterID && target?.kubeconfigFile == nil)
        // Without the deployment's own cluster, SO_KUBECONFIG (here missing: its error names it).
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "other"))
        await #expect {
            _ = try await ClusterTargets(ctx: c.ctx).find(
                try RenderAction(c.ctx).model("dep"), ClusterOptions(performClusterManagement: false),
                allowCreate: false)
        } throws: { ($0 as? SoError)?.message.contains("/nonexistent/ci-kubeconfig") == true }
    }

    @Test func nothingToUseNamesEverythingTried() async throws {
        let c = try await ClusterHarness()
        await #expect {
            _ = try await ObserveAction(c.ctx).status("dep", cluster: ClusterOptions(performClusterManagement: false))
        } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.exitCode == SoError.exitUnreachable
                && e.message.hasPrefix("no cluster to use; tried --kubeconfig/--context (not given)")
                && e.message.contains("SO_KUBECONFIG (not set)") && e.message.contains("kind is not installed")
                && e.message.contains("$KUBECONFIG")
                && (e.hint ?? "").contains("--kubeconfig")
        }
    }

    /// kind installed with its engine stopped (`kind get clusters` fails as it does when docker is down) is not
    /// the end: SO_KUBECONFIG and the user's kubeconfig still answer (a kind deployment sent there is warned
    /// about), and with nothing else the error names kind's failure.
    @Test func aKindWhoseEngineIsDownDoesNotStopTheSearch() async throws {
        let dockerDown =
            "ERROR: failed to list clusters: command \"docker ps -a --filter label=io.x-k8s.kind.cluster\" failed with error: exit status 1"
        var c = try await ClusterHarness()
        c = ClusterHarness(
            copying: c,
            ctx: {
                var x = c.ctx
                x.environment["SO_KUBECONFIG"] = c.h.tmp.file("ci-kubeconfig")
                return x
            }())
        c.h.processes.missing = []
        try c.h.tmp.write("ci-kubeconfig", Self.kubeconfig(context: "ci"))
        let model = try RenderAction(c.ctx).model("dep")
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        let ci = try await ClusterTargets(ctx: c.ctx).find(model, ClusterOptions(), allowCreate: true)
        #expect(ci?.connection.contextName == "ci" && ci?.kindCluster == nil)
        var ctx = c.ctx
        ctx.environment["SO_KUBECONFIG"] = nil
        try c.h.tmp.write("user-kubeconfig", Self.kubeconfig(context: "prod"))
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        let prod = try await ClusterTargets(ctx: ctx).find(model, ClusterOptions(), allowCreate: true)
        #expect(prod?.connection.contextName == "prod")
        #expect(
            ctx.diagnostics.all.contains {
                $0.message.contains("cannot be listed ('kind get clusters' failed: ERROR: failed to list clusters")
                    && $0.message.contains("using context prod")
            },
            "\(ctx.diagnostics.all)")
        // A kubeconfig naming no context (as `kind delete cluster` leaves ~/.kube/config) is as good as none.
        try c.h.tmp.write("user-kubeconfig", "apiVersion: v1\nkind: Config\n")
        c.h.processes.expect(["kind", "get", "clusters"], exitCode: 1, stderr: dockerDown)
        await #expect {
            _ = try await ClusterTargets(ctx: ctx).find(model, ClusterOptions(), allowCreate: true)
        } throws: { e in
            guard let e = e as? SoError else { return false }
            return e.message.contains(
                "the deployment's kind cluster '\(model.identity.clusterID)' ('kind get clusters' failed: ERROR: failed to list clusters"
            )
                && e.message.contains("the host's kind clusters (the same)")
                && e.message.contains("(no kubeconfig naming a context)")
                && (e.hint ?? "").contains("or start docker (kind's engine)")
        }
        #expect(
            c.h.processes.unexpected.isEmpty && c.h.processes.pending.isEmpty,
            "\(c.h.processes.unexpected) \(c.h.processes.pending)")
    }

    /// exec, shell and port-forward hand kubectl exactly the cluster so chose.
    @Test func kubectlGetsTheChosenKubeconfig() async throws {
        let c = try await ClusterHarness(environment: ["SO_KUBECONFIG": "/tmp/ci-kubeconfig-for-test"])
        let target = ClusterTarget(
            connection: ClusterConnection(contextName: "ci", server: "https://127.0.0.1:6443"), kindCluster: nil,
            kubeconfigFile: "/tmp/ci-kubeconfig-for-test")
        #expect(target.kubectlFlags == ["--kubeconfig", "/tmp/ci-kubeconfig-for-test", "--context", "ci"])
        let user = ClusterTarget(
            connection: ClusterConnection(contextName: "kind-x", server: "https://127.0.0.1:6443"), kindCluster: "x")
        #expect(user.kubectlFlags == ["--context", "kind-x"])
        _ = c
    }
}
