import Foundation
import SoBasics
import SoKube
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

/// The wait believes what the cluster reports, not a fixed settle: a kubelet played over the test clock
/// reports a container running, then its exit in the round (once a second) after it happened.
@Suite struct WaitEvidenceTests {
    /// A kubelet that reports the container running `reportedAt` seconds after the Deployment is applied
    /// (t0, a whole second), then once a second; the container exits `exitAfter` seconds after it started
    /// (nil: never), is reported exited in the round after, and crash-loops from the round after that.
    final class Kubelet: @unchecked Sendable {
        let cluster = FakeCluster()
        let clock = FixedClock()
        let t0: Date
        let reportedAt: Double
        let exitAfter: Double?
        /// How much later than its round a busy kubelet reports the exit.
        var exitReportLate = 0.0
        init(reportedAt: Double, exitAfter: Double?) throws {
            t0 = clock.now()
            self.reportedAt = reportedAt
            self.exitAfter = exitAfter
            try cluster.seed(
                KubeObject(
                    apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "ns", labels: [("app", "x")],
                    body: [("spec", .map([("replicas", .int(1))]))]))
            try cluster.seed(
                KubeObject(
                    apiVersion: "v1", kind: "Pod", name: "web-1", namespace: "ns", labels: [("app", "x")],
                    body: [("spec", .map([("containers", .list([.map([("name", .string("c"))])]))]))]))
            let cluster = cluster
            cluster.beforeCall = { [weak self] call in
                guard let self, call.hasPrefix("list") else { return }
                let (container, available) = self.report(at: self.clock.now().timeIntervalSince(self.t0))
                cluster.update("Pod", "web-1", namespace: "ns") { pod in
                    guard case .object(var o) = pod else { return }
                    o["status"] = .object(["containerStatuses": .array([container])])
                    pod = .object(o)
                }
                cluster.update("Deployment", "web", namespace: "ns") { d in
                    guard case .object(var o) = d else { return }
                    o["status"] = .object([
                        "updatedReplicas": .number(1), "availableReplicas": .number(available ? 1 : 0),
                    ])
                    d = .object(o)
                }
            }
        }

        /// The container's status and the Deployment's availability as the kubelet has reported them at `t`.
        func report(at t: Double) -> (JSON, Bool) {
            guard t >= reportedAt else {
                return (status(["waiting": .object(["reason": .string("ContainerCreating")])], ready: false), false)
            }
            // The rounds after the first report: the first that follows the exit reports it.
            let round = { (at: Double) in self.reportedAt + (at - self.reportedAt).rounded(.up) + self.exitReportLate }
            if let exitAfter, t >= round(max(exitAfter, reportedAt + 0.001)) {
                if t >= round(max(exitAfter, reportedAt + 0.001)) + 1 {
                    let waiting: JSON = .object([
                        "reason": .string("CrashLoopBackOff"), "message": .string("back-off 10s restarting"),
                    ])
                    return (status(["waiting": waiting], ready: false, restarts: 1), false)
                }
                return (status(["terminated": .object(["exitCode": .number(3)])], ready: false), false)
            }
            let started = Timestamps.rfc3339(t0)
            return (status(["running": .object(["startedAt": .string(started)])], ready: true), true)
        }

        func status(_ state: [String: JSON], ready: Bool, restarts: Int = 0) -> JSON {
            .object([
                "name": .string("c"), "ready": .bool(ready), "restartCount": .number(Double(restarts)),
                "state": .object(state),
            ])
        }

        func wait(uptime: ContainerUptime? = nil) async throws -> Double {
            let t = try TempDir("so-wait-evidence")
            defer { t.cleanup() }
            let ctx = SoContext(
                fs: LocalFileSystem(currentDirectory: t.path), processes: FakeProcessRunner(), clock: clock,
                entropy: SeededEntropy(), console: CapturedConsole(), environment: [:], builtInRoot: nil)
            var waiter = Waiter(ctx: ctx, client: cluster, namespace: "ns", selector: "app=x")
            waiter.uptime = uptime
            let deployment = KubeObject(apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "ns")
            try await waiter.wait(
                for: [deployment], timeout: 60, progress: ProgressReporter(ctx: ctx, mode: .plain))
            return clock.now().timeIntervalSince(t0)
        }
    }

    /// A container that exits at once, or after 1 s, is named (its crash loop), whether the kubelet reports
    /// its start after 0.3 s or, busy, after 2.5 s (its exit a round later still). One that exits after 3 s is
    /// named when the busy kubelet reports the exit before the start is believed, and is believed on the idle
    /// one, having run past the round that would have reported an exit at its start; one that exits after
    /// 6 s, or never, is believed. Believed means: the moment the cluster last said it ran, within about one
    /// round of its start's report (the busy kubelet's lateness added) — no fixed settle.
    @Test(
        arguments: [
            (0.3, 0.0, true), (0.3, 1.0, true), (0.3, 3.0, false), (0.3, 6.0, false), (0.3, nil, false),
            (2.5, 0.0, true), (2.5, 1.0, true), (2.5, 3.0, true), (2.5, 6.0, false), (2.5, nil, false),
        ] as [(Double, Double?, Bool)])
    func anExitIsNamedWhenTheClusterReportsIt(reportedAt: Double, exitAfter: Double?, named: Bool) async throws {
        let kubelet = try Kubelet(reportedAt: reportedAt, exitAfter: exitAfter)
        if named {
            await #expect {
                _ = try await kubelet.wait()
            } throws: { e in
                ((e as? SoError)?.message ?? "").contains("pod ns/web-1 container c keeps crashing (CrashLoopBackOff)")
            }
            return
        }
        let took = try await kubelet.wait()
        #expect(kubelet.report(at: took).1, "it was still reported running when believed")
        let late = max(0, reportedAt - 2)
        #expect(
            took >= reportedAt + ContainerEvidence.reportSeconds + late
                && took < reportedAt + ContainerEvidence.reportSeconds + 0.25 + late)
    }
}
