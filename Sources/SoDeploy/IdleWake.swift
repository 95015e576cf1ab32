import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// A workspace with `idle:` is stopped by `so cleanup --idle` when unused; the verbs that need its container
/// (shell, exec, task, diff, push, fetch, apply …) record each use and start it again first.
extension ConnectedDeployment {
    /// Whether this deployment's uses are recorded (its spec sets `workspace.idle`).
    package var recordsUse: Bool { model.spec.workspace?.idleSeconds != nil }

    /// Records that a verb uses the container now (the Namespace's `so.dev/last-used`): one request, made
    /// only for a workspace with `idle:`.
    package func recordUse() async throws {
        guard recordsUse else { return }
        _ = try await client.annotate(
            .namespace, name: namespace, namespace: nil,
            [(DeploymentNames.Annotation.lastUsed, Timestamps.rfc3339(ctx.clock.now()))])
    }

    /// When `so cleanup --idle` stopped the deployment (and nothing started it since): starts it again,
    /// saying so, and returns true. A deployment stopped by hand is left to its owner (false).
    package func wakeIfIdle() async throws -> Bool {
        guard let ns = try await client.get(.namespace, name: namespace, namespace: nil),
            let stopped = ns.annotations[DeploymentNames.Annotation.idleStopped]
        else { return false }
        let name = Path.basename(model.directory)
        ctx.say("\(name) was stopped for being idle (\(stopped)); starting it again")
        // Its old pods end first, as on any start in a namespace with a quota (StartSteps.waitForEndingPods).
        var start = StartRequest(
            directory: model.directory, cluster: options, wait: true, timeout: 300, progress: .plain)
        start.verb = "wake"
        try await StartAction(ctx).run(start)
        return true
    }
}
