import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoWorkspace

extension DashboardFeed {
    /// Reads workspaces' containers in two lanes, so a page's workspace never waits behind the rest: the busy lane
    /// (a page open, or a task queued or running) every half second, `concurrentReads` at a time; the quiet lane
    /// (never read, or read longer than `quietInterval` ago) one a second, so the cluster's other workspaces cost
    /// it one `kubectl exec` a second at most.
    func workspaceLoop() async {
        await withTaskGroup(of: Void.self) { group in
            for busy in [true, false] {
                group.addTask {
                    while !Task.isCancelled {
                        await self.readWorkspaces(busy: busy)
                        try? await Task.sleep(for: .seconds(busy ? 0.5 : 1))  // cancelled: the loop ends
                    }
                }
            }
        }
    }

    /// A workspace due for a read: its probe, and whether a page of it is open.
    struct Due: Sendable {
        var probe: WorkspaceProbe
        var open: Bool
    }

    /// The workspaces one lane reads now, open pages first, then those read longest ago; at most
    /// `concurrentReads` in a round, none another lane is reading.
    func due(now: Date, busy lane: Bool) -> [Due] {
        var due: [(Due, Int, Date)] = []
        for l in snapshot.listings where !reading.contains(l.namespace) {
            guard let at = l.workspaceAt, let place = WorkspaceProbe.location(at),
                let pod = snapshot.pods[l.namespace]?.first(where: { $0.running.contains(place.container) })
            else { continue }
            let view = snapshot.workspaces[l.namespace]
            let open = watching[l.namespace] != nil
            let read = view?.readAt ?? .distantPast
            let busy = open || view?.active == true
            guard busy == lane, now.timeIntervalSince(read) >= (busy ? 0.4 : view == nil ? 0 : quietInterval) else {
                continue
            }
            let probe = WorkspaceProbe(
                namespace: l.namespace, pod: pod.name, container: place.container, path: place.path,
                kubectlFlags: kubectlFlags)
            due.append((Due(probe: probe, open: open), open ? 0 : 1, read))
        }
        return due.sorted { ($0.1, $0.2) < ($1.1, $1.2) }.prefix(lane ? concurrentReads : 1).map(\.0)
    }

    func readWorkspaces(busy: Bool) async {
        let due = due(now: ctx.clock.now(), busy: busy)
        guard !due.isEmpty else { return }
        for d in due { reading.insert(d.probe.namespace) }
        var read: [String: WorkspaceView] = [:]
        await withTaskGroup(of: (String, WorkspaceView).self) { group in
            for d in due {
                let previous = snapshot.workspaces[d.probe.namespace]
                group.addTask { (d.probe.namespace, await self.readWorkspace(d, previous: previous)) }
            }
            for await (ns, v) in group { read[ns] = v }
        }
        for d in due { reading.remove(d.probe.namespace) }
        var next = snapshot
        for (ns, v) in read where next.listing(ns) != nil { next.workspaces[ns] = v }
        publish(next)
    }

    /// One workspace's tasks (one `kubectl exec`); with a page open, its checkout and its newest task's output
    /// too; every string of it with each secret value of its namespace replaced by `<secret>` (when the Secrets
    /// cannot be read, nothing of it is shown but why).
    nonisolated func readWorkspace(_ d: Due, previous: WorkspaceView?) async -> WorkspaceView {
        let redactor: Redactor
        do {
            redactor = try await Redactor.read(client, namespace: d.probe.namespace, ctx: ctx)
        } catch {
            var v = WorkspaceView()
            v.readAt = ctx.clock.now()
            v.problem = "its Secrets could not be read, so nothing of it is shown: \(error)"
            return v
        }
        return await readUnredacted(d, previous: previous).redacted(redactor)
    }

    nonisolated func readUnredacted(_ d: Due, previous: WorkspaceView?) async -> WorkspaceView {
        var v = previous ?? WorkspaceView()
        v.readAt = ctx.clock.now()
        do {
            v.tasks = try await d.probe.tasks(ctx.processes)
            v.problem = nil
            guard d.open else { return v }
            let checkout = try await d.probe.checkout(ctx.processes)
            (v.state, v.commits) = (checkout.state, checkout.commits)
            if let t = v.tasks.first(where: { $0.state == "running" }) ?? v.tasks.max(by: { $0.id < $1.id }) {
                let text = try await d.probe.output(ctx.processes, id: t.id, lines: 60)
                // Claude Code's stream-json events read as `tasks logs` shows them; any other line as it is.
                let shown = text.split(separator: "\n", omittingEmptySubsequences: false).flatMap {
                    AgentOutput.render(String($0))
                }.joined(separator: "\n")
                v.output = (t.id, shown)
            }
        } catch {
            v.problem = "\(error)"
        }
        return v
    }
}
