import Foundation
import Testing
@testable import SoActions
import SoBasics
import SoKube
import SoTestSupport

@Suite struct WaiterTests {
    /// A failed Job is explained by a pod of its own (its `job-name` label), not by whichever problem
    /// the deployment's pods report first, nor by text that happens to mention the Job's name.
    @Test func aFailedJobIsExplainedByItsOwnPod() async throws {
        let c = try await ClusterHarness(healthy: false)
        c.cluster.onApply = { json in
            guard case .object(var o) = json else { return }
            if o["kind"]?.string == "Job" { o["status"] = .object(["failed": .number(1)]) }
            json = .object(o)
        }
        try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Namespace", name: c.id, annotations: [("laconic.com/deployment-dir", c.h.path("dep"))]))
        let job = "\(c.id)-job-example-migrate"
        for (pod, labels, reason) in [("web-1", [(String, String)](), "ContainerCreating"), ("migrate-x1", [("job-name", job)], "PodInitializing")] {
            try c.cluster.seed(KubeObject(apiVersion: "v1", kind: "Pod", name: pod, namespace: c.id, labels: [("app", c.id), ("app.kubernetes.io/instance", c.id)] + labels))
            c.cluster.update("Pod", pod, namespace: c.id) { p in
                guard case .object(var o) = p else { return }
                o["status"] = .object(["containerStatuses": .array([.object(["name": .string("c"), "state": .object(["waiting": .object(["reason": .string(reason)])])])])])
                p = .object(o)
            }
        }
        await #expect { _ = try await c.start() } throws: { e in
            (e as? SoError)?.message == "Job \(c.id)/\(job) failed: pod \(c.id)/migrate-x1 container c is waiting (PodInitializing)"
        }
    }
}
