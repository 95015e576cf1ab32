import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoWorkspace

extension DashboardFeed {
    /// Reads workspaces' containers, a few at a time, each second.
    func workspaceLoop() async {
        while !Task.isCancelled {
            await readWorkspaces()
            try? await Task.sleep(for: .seconds(1))  // cancelled: the loop ends
        }
    }

    /// A workspace due for a read: its probe, and whether a page of it is open.
    struct Due: Sendable {
        var probe: WorkspaceProbe
        var open: Bool
    }

    /// The workspaces read now: those with a page open or a task queued or running (each second), those never
    /// read, then those read longest ago (every `quietInterval`); open and busy ones first, at most twice
    /// `concurrentReads` in a round.
    func due(now: Date) -> [Due] {
        var due: [(Due, Int, Date)] = []
        for l in snapshot.listings {
            guard let at = l.workspaceAt, let place = WorkspaceProbe.location(at),
                let pod = snapshot.pods[l.namespace]?.first(where: { $0.running.contains(place.container) })
            else { continue }
            let view = snapshot.workspaces[l.namespace]
            let open = watching[l.namespace] != nil
            let read = view?.readAt ?? .distantPast
            let busy = open || view?.active == true
            guard busy ? now.timeIntervalSince(read) >= 0.9 : now.timeIntervalSince(read) >= quietInterval else {
                continue
            }
            let probe = WorkspaceProbe(
                namespace: l.namespace, pod: pod.name, container: place.container, path: place.path,
                kubectlFlags: kubectlFlags)
            due.append((Due(probe: probe, open: open), open ? 0 : busy ? 1 : view == nil ? 2 : 3, read))
        }
        return due.sorted { ($0.1, $0.2) < ($1.1, $1.2) }.prefix(concurrentReads * 2).map(\.0)
    }

    func readWorkspaces() async {
        let due = due(now: ctx.clock.now())
        guard !due.isEmpty else { return }
        var read: [String: WorkspaceView] = [:]
        await withTaskGroup(of: (String, WorkspaceView).self) { group in
            var started = 0
            for d in due {
                if started >= concurrentReads, let (ns, v) = await group.next() { read[ns] = v }
                let previous = snapshot.workspaces[d.probe.namespace]
                group.addTask { (d.probe.namespace, await self.readWorkspace(d, previous: previous)) }
                started += 1
            }
            for await (ns, v) in group { read[ns] = v }
        }
        var next = snapshot
        for (ns, v) in read where next.listing(ns) != nil { next.workspaces[ns] = v }
        publish(next)
    }

    /// One workspace's tasks (one `kubectl exec`); with a page open, its checkout and its newest task's output
    /// too, every secret value of its namespace replaced by `<secret>`.
    nonisolated func readWorkspace(_ d: Due, previous: WorkspaceView?) async -> WorkspaceView {
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
                v.output = (t.id, try await Redactor.read(client, namespace: d.probe.namespace, ctx: ctx).apply(shown))
            }
        } catch {
            v.problem = "\(error)"
        }
        return v
    }
}
