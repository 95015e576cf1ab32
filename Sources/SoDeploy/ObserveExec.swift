import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

extension ObserveAction {
    /// Runs a command in a service's container (`ContainerExec`: through the API server, or kubectl for a terminal
    /// or stdin) and returns its exit code. A workspace's own container, where an earlier verb found it
    /// (`KnownContainer`), costs one exec and nothing else.
    /// Exit 1 (the command's own, or kubectl's when that pod is gone) has the pods looked at: the pod gone, the
    /// command runs once more in the one running now.
    public func exec(
        _ directory: String, cluster: ClusterOptions, service: String, command: [String], interactive: Bool, tty: Bool
    ) async throws -> Int32 {
        let dir = ctx.absolute(directory)
        let options = (interactive ? ["-i"] : []) + (tty ? ["-t"] : [])
        let label = NameRules.dnsLabel(service)
        // On a workspace the workspace's service is the default: `exec -- cat f` names no service, and its first
        // word is the command's (a word that is one of the stack's services still names it).
        if let known = KnownContainer.read(ctx, directory: dir, cluster: cluster),
            label == known.container || !known.services.contains(label)
        {
            ctx.phase("exec: known container read")
            let run = label == known.container ? command : [service] + command
            let code = try await known.exec(ctx).attached(options, HandedCredentials.wrap(run.isEmpty ? ["sh"] : run))
            guard code == 1 else {
                try await recordUseIfDue(known, directory: dir, cluster: cluster)
                return code
            }
            return try await execLookingUp(dir, cluster, service, command, options, after: known)
        }
        return try await execLookingUp(dir, cluster, service, command, options, after: nil)
    }

    /// `exec` with the pods read: the deployment opened, a workspace stopped for being idle started again, the
    /// use recorded, and where a workspace's container runs kept for the next verb. `after`: the known pod an
    /// exec just failed in (its exit code 1 is the command's own when that pod still runs).
    func execLookingUp(
        _ dir: String, _ cluster: ClusterOptions, _ service: String, _ command: [String], _ options: [String],
        after known: KnownContainer?
    ) async throws -> Int32 {
        let c = try await ConnectedDeployment.open(ctx, directory: dir, cluster: cluster)
        var (service, command) = (service, command)
        if let workspace = c.model.spec.workspace,
            !(c.model.pods + c.model.jobs).contains(where: { pod in
                pod.compose.services.contains { NameRules.dnsLabel($0.name) == NameRules.dnsLabel(service) }
            })
        {
            command = [service] + command
            service = workspace.service
        }
        let container = NameRules.dnsLabel(service)
        let workspace = c.model.spec.workspace.map { NameRules.dnsLabel($0.service) } == container
        let (pods, pod) = try await runningPod(c, container: container, service: service)
        try await c.recordUse()
        if workspace, pod.at("status", "phase")?.string == "Running" {
            c.known(pod: pod.name, usedAt: c.recordsUse ? ctx.clock.now() : nil)?.write(ctx, directory: dir)
        }
        if let known {
            // The known pod still runs: the exit code was the command's, which is not run twice.
            if pods.contains(where: { $0.name == known.pod && $0.at("status", "phase")?.string == "Running" }) {
                return 1
            }
            if !ctx.options.quiet {
                ctx.console.err("so: pod \(known.pod) is gone; running the command again in \(pod.name)")
            }
        }
        let run = command.isEmpty ? ["sh"] : command
        // A workspace's container: credentials handed in by a claim are read first (HandedCredentials).
        let exec = ContainerExec(
            ctx, client: c.client, namespace: c.namespace, pod: pod.name, container: container,
            kubectlFlags: c.target.kubectlFlags)
        return try await exec.attached(options, workspace ? HandedCredentials.wrap(run) : run)
    }

    /// The deployment's pods with `container`, and the one to exec into (running and not being deleted, else
    /// running, else any); a workspace stopped for being idle is started again first.
    func runningPod(_ c: ConnectedDeployment, container: String, service: String) async throws -> ([JSON], JSON) {
        func withContainer() async throws -> [JSON] {
            try await c.pods().filter { p in
                (p.at("spec", "containers")?.array ?? []).contains { $0["name"]?.string == container }
            }
        }
        var pods = try await withContainer()
        let live = pods.contains {
            $0.at("status", "phase")?.string == "Running" && $0.at("metadata", "deletionTimestamp") == nil
        }
        if !live, try await c.wakeIfIdle() {
            pods = try await withContainer()
        }
        let running = pods.filter { $0.at("status", "phase")?.string == "Running" }
        guard
            let pod = running.first(where: { $0.at("metadata", "deletionTimestamp") == nil }) ?? running.first
                ?? pods.first
        else {
            let all = Set(try await c.pods().flatMap { Self.podInfo($0).containers }).sorted()
            throw SoError(
                "no running pod has a container named \(service)",
                hint: all.isEmpty ? "start the deployment first" : "services: \(all.joined(separator: ", "))")
        }
        return (pods, pod)
    }

    /// A use of a known container recorded on the Namespace when the last record from this directory is over
    /// `KnownContainer.useInterval` old (the container itself has the exact time: `HandedCredentials.marker`).
    func recordUseIfDue(_ known: KnownContainer, directory: String, cluster: ClusterOptions) async throws {
        // Opened only when a use is due: a known container's exec reads no file of the deployment otherwise.
        guard known.useDue(ctx.clock.now()) else { return }
        try await ConnectedDeployment.open(ctx, directory: directory, cluster: cluster).recordUseIfDue(
            known, directory: directory)
    }
}
