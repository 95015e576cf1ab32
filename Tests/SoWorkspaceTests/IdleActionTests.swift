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
@testable import SoWorkspace

/// Idle workspaces recycled: `so cleanup --idle` stops those unused past their `idle:` (and not busy inside),
/// their volumes kept; the next verb that needs the container starts it again.
@Suite struct IdleTests {
    func up(_ w: WorkspaceHarness, _ name: String, idle: String?) async throws {
        var req = UpRequest(stack: "agent-workspace")
        req.name = name
        req.idle = idle
        req.cluster = w.clusterOptions
        req.timeout = 30
        req.progress = .plain
        _ = try await UpAction(w.ctx).run(req)
    }

    /// A running agent pod of the workspace `name`, so the busy look has a container to exec into.
    func podRuns(_ w: WorkspaceHarness, _ name: String) throws {
        let id = try #require(w.cluster.object("Namespace", name)?.labels["app.kubernetes.io/instance"])
        try w.cluster.seed(AgentPod.running(id: id, namespace: name))
    }

    func deployments(_ w: WorkspaceHarness, _ ns: String) -> Int {
        w.cluster.all.filter { $0.0.type.kind == "Deployment" && $0.0.namespace == ns }.count
    }

    @Test func theSpecSaysHowLongAndTheNamespaceCarriesIt() async throws {
        let w = try WorkspaceHarness()
        try await up(w, "lazy", idle: "90m")
        let spec = try Spec.load(
            w.h.path("so-home/deployments/lazy/spec.yml"), fs: w.h.fs, diagnostics: DiagnosticSink())
        #expect(spec.workspace?.idleSeconds == 5400)
        let ns = try #require(w.cluster.object("Namespace", "lazy"))
        #expect(
            ns.annotations["so.dev/idle-after"] == "5400" && ns.annotations["so.dev/workspace"] == "agent /workspace")
        try await up(w, "busy", idle: nil)
        #expect(w.cluster.object("Namespace", "busy")?.annotations["so.dev/idle-after"] == nil)
        try w.h.tmp.write(
            "bad/spec.yml",
            "stack: agent-workspace\ndeploy-to: k8s-kind\nworkspace:\n  service: agent\n  idle: soonish\n")
        let e = #expect(throws: SoError.self) {
            try Spec.load(w.h.path("bad/spec.yml"), fs: w.h.fs, diagnostics: DiagnosticSink())
        }
        #expect(e?.message.contains("workspace idle 'soonish' is not a duration") == true, "\(String(describing: e))")
        #expect(String(describing: e).contains("spec.yml:5"), "names the line: \(String(describing: e))")
    }

    @Test func onlyTheUnusedAndQuietAreStoppedTheirVolumesKept() async throws {
        let w = try WorkspaceHarness()
        for name in ["quiet", "shell-open", "fresh"] { try await up(w, name, idle: "1h") }
        try await up(w, "no-idle", idle: nil)
        for name in ["quiet", "shell-open", "fresh", "no-idle"] { try podRuns(w, name) }
        try await w.clock.sleep(seconds: 3000)
        // fresh was used 10 minutes before the look: its clock starts again.
        let dir = w.h.path("so-home/deployments/fresh")
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        try await w.clock.sleep(seconds: 700)
        // Inside the containers: shell-open has an exec session, quiet has nothing.
        w.h.processes.fallback = { args in
            guard args.first == "kubectl", args.contains("exec"),
                let ns = args.firstIndex(of: "-n").map({ args[$0 + 1] })
            else { return nil }
            return ProcessResult(
                exitCode: 0, stdout: ns == "shell-open" ? "a shell or exec is open in it (bash -l)\n" : "")
        }
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        req.dryRun = true
        let seen = try await IdleAction(w.ctx).run(req)
        #expect(seen.map { "\($0.listing.name):\($0.stopped)" } == ["quiet:true", "shell-open:false"], "\(seen)")
        #expect(deployments(w, "quiet") > 0, "a dry run stops nothing")
        req.dryRun = false
        let done = try await IdleAction(w.ctx).run(req)
        #expect(done.first { $0.stopped }?.listing.name == "quiet")
        #expect(deployments(w, "quiet") == 0 && deployments(w, "shell-open") > 0 && deployments(w, "fresh") > 0)
        #expect(deployments(w, "no-idle") > 0)
        #expect(
            !w.cluster.all.filter { $0.0.type.kind == "PersistentVolumeClaim" && $0.0.namespace == "quiet" }.isEmpty)
        #expect(w.cluster.object("Namespace", "quiet")?.annotations["so.dev/idle-stopped"] != nil)
        let listed = try await ListAction(w.ctx).run(cluster: w.clusterOptions)
        #expect(listed.first { $0.name == "quiet" }?.idleStopped == true)
        // A second look leaves a stopped one alone.
        #expect(try await IdleAction(w.ctx).run(req).filter(\.stopped).isEmpty)
    }

    @Test func theNextVerbThatNeedsTheContainerStartsItAgain() async throws {
        let w = try WorkspaceHarness()
        try await up(w, "nap", idle: "1h")
        try await w.clock.sleep(seconds: 4000)
        var req = CleanupRequest()
        req.cluster = w.clusterOptions
        #expect(try await IdleAction(w.ctx).run(req).map(\.stopped) == [true])
        #expect(deployments(w, "nap") == 0)
        let dir = w.h.path("so-home/deployments/nap")
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        #expect(deployments(w, "nap") > 0, "started again")
        #expect(w.cluster.object("Namespace", "nap")?.annotations["so.dev/idle-stopped"] == nil)
        #expect(w.h.console.stdout.contains("nap was stopped for being idle"), "\(w.h.console.stdout)")
        // A workspace stopped by hand is its owner's: not started behind their back.
        try await StopAction(w.ctx).run(StopRequest(directory: dir, cluster: w.clusterOptions, volumeGuard: nil))
        let again = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        #expect(again.pod == nil && deployments(w, "nap") == 0)
        // A use is recorded on the namespace (only for a workspace with idle:).
        try podRuns(w, "nap")
        try await w.clock.sleep(seconds: 5)
        _ = try await WorkspaceContainer.open(w.ctx, directory: dir, cluster: w.clusterOptions)
        let used = w.cluster.object("Namespace", "nap")?.annotations["so.dev/last-used"]
        #expect(used == Timestamps.rfc3339(w.clock.now()), "\(String(describing: used))")
    }
}

@Suite struct IdleLockTests {
    /// Another so changing the workspace (its Lease held) keeps it this round: the stop never interleaves.
    @Test func aWorkspaceAnotherSoIsChangingIsKept() async throws {
        let w = try WorkspaceHarness()
        var req = UpRequest(stack: "agent-workspace")
        req.name = "busy-lock"
        req.idle = "1h"
        req.cluster = w.clusterOptions
        req.timeout = 30
        req.progress = .plain
        _ = try await UpAction(w.ctx).run(req)
        try await w.clock.sleep(seconds: 4000)
        try w.cluster.seed(
            KubeObject(
                apiVersion: "coordination.k8s.io/v1", kind: "Lease", name: "so-deployment-lock", namespace: "busy-lock",
                body: [
                    (
                        "spec",
                        .map([
                            ("holderIdentity", .string("elsewhere:1:ab")), ("leaseDurationSeconds", .int(600)),
                            ("renewTime", .string(Timestamps.microTime(w.clock.now()))),
                        ])
                    )
                ]))
        var cleanup = CleanupRequest()
        cleanup.cluster = w.clusterOptions
        let seen = try await IdleAction(w.ctx).run(cleanup)
        #expect(seen.map { "\($0.stopped):\($0.reason)" } == ["false:another so is changing it"], "\(seen)")
        #expect(w.cluster.all.contains { $0.0.type.kind == "Deployment" && $0.0.namespace == "busy-lock" })
    }

    /// A start right after a stop, in a namespace with a quota (every workspace's): the stopped pods end before the
    /// new ones are made, as they count against the quota. None ending costs one list.
    @Test func aStartWaitsForTheStoppedPodsToEndInANamespaceWithAQuota() async throws {
        let w = try WorkspaceHarness()
        try await IdleTests().up(w, "again", idle: nil)
        let id = try #require(w.cluster.object("Namespace", "again")?.labels["app.kubernetes.io/instance"])
        // Stopped: its Deployments gone, one of its pods still ending.
        func stop() {
            for (key, _) in w.cluster.all where key.type.kind == "Deployment" && key.namespace == "again" {
                w.cluster.remove("Deployment", key.name, namespace: "again")
            }
        }
        stop()
        try w.cluster.seed(AgentPod.running(id: id, namespace: "again", name: "old-pod"))
        w.cluster.update("Pod", "old-pod", namespace: "again") { pod in
            guard case .object(var o) = pod, case .object(var meta)? = o["metadata"] else { return }
            meta["deletionTimestamp"] = .string("2026-11-25T20:00:00Z")
            o["metadata"] = .object(meta)
            pod = .object(o)
        }
        let cluster = w.cluster
        let lists = Counter()
        // The old pod is gone after the third look.
        cluster.beforeCall = { call in
            guard call.hasPrefix("list Pod again") else { return }
            if lists.next() == 3 { cluster.remove("Pod", "old-pod", namespace: "again") }
        }
        let slept = w.clock.slept
        try await StartAction(w.ctx).run(
            StartRequest(directory: try w.ctx.namedDeployment("again"), cluster: w.clusterOptions, wait: false))
        #expect(w.h.console.stdout.contains("waiting for 1 stopped pod to end (they count against the quota)"))
        #expect(lists.value >= 3 && w.clock.slept - slept >= 0.4, "\(lists.value) \(w.clock.slept - slept)")
        // Nothing ending: one look, no wait.
        stop()
        let before = lists.value
        let quiet = w.clock.slept
        try await StartAction(w.ctx).run(
            StartRequest(directory: try w.ctx.namedDeployment("again"), cluster: w.clusterOptions, wait: false))
        #expect(lists.value - before == 1 && w.clock.slept == quiet, "\(lists.value - before)")
    }
}
