import Foundation
import SoActions
import SoBasics
import SoCompose
import SoKube
import SoRender
import SoStack

/// Waits until Deployments are available and Jobs complete; a failure names the object and why
/// (ImagePullBackOff with the image, CrashLoopBackOff with the last log lines, Unschedulable with the
/// scheduler's message, a Pending claim).
struct Waiter {
    let ctx: SoContext
    let client: ClusterClient
    let namespace: String
    /// Label selector of the pods and claims to diagnose.
    let selector: String
    /// The deployment directory the hints name (`so deployment --dir DIR logs …`).
    var directory = "D"
    /// Containers a wait before this one believed running (the Namespace's `so.dev/believed`, as start read it):
    /// the same start of the same container (pod UID, name, restart count) is believed at once. Nil: this wait
    /// records nothing either (a wait that is not a start's).
    var believedBefore: Set<String>? = nil
    /// Asks a young container how long it has run (`ContainerEvidence.provenSeconds`); nil: the kubelet's round
    /// alone believes it.
    var uptime: ContainerUptime? = nil
    /// A container the caller proves ready by itself meanwhile (`ReadyConfirmation`): not believed for that (what
    /// a later reader sees is the kubelet's Ready), but the kubelet is nudged soon after if it does not say so.
    var confirmation: ReadyConfirmation? = nil

    /// A young container start to be asked its age now.
    struct Ask {
        var pod: String
        var container: String
        var start: String
    }

    struct Problem {
        var fatal: Bool
        /// A claim whose volume another claim holds (`pendingClaim`): why its pod waits.
        var held = false
        var message: String
        var hint: String
        /// The Job whose pod it is (its `job-name` label), so a failed Job is explained by its own pod.
        var job: String? = nil
        /// A pod the scheduler found no room for (for lack of resources): the pod, as listed.
        var unschedulable: JSON? = nil
        /// Said on the status line while waiting (why a pod waits, when the wait is expected to end by itself).
        var shown = false
    }

    /// How long a pod may stay unschedulable for lack of resources before a cluster that cannot add nodes
    /// is believed (the scheduler retries as other pods go; a namespace being deleted frees its requests).
    static let unschedulableGrace = 3.0

    var dir: String { ShellWords.quote(directory) }

    func wait(for objects: [KubeObject], timeout: Double, progress: ProgressReporter) async throws {
        let deployments = objects.filter { $0.isKind(.deployment) }.map(\.name)
        let jobs = objects.filter { $0.isKind(.job) }.map(\.name)
        let start = ctx.clock.now()
        var lastState = ""
        var pause = 0.1
        var unschedulableSince: [String: Date] = [:]
        var capacity: NodeCapacity?
        var evidence = ContainerEvidence()
        var sightings = KubeletNudge.Sightings()
        // Woken by a change to the pods, Deployments or Jobs as soon as it is reported: a container seen running
        // at once (its evidence starts then), a Deployment believed as it becomes available, a Job as it is counted
        // complete; and by a container proved ready.
        let watch = ChangeWatch(
            client, namespace: namespace,
            [(.pod, selector), (.deployment, selector)] + (jobs.isEmpty ? [] : [(.job, selector)]), seconds: timeout,
            also: confirmation.map { c in [{ await c.next() }] } ?? [])
        defer { watch.stop() }
        while true {
            var listed: [JSON]?
            var (pending, liveDeployments) = try await pendingWorkloads(
                deployments: deployments, jobs: jobs, pods: &listed)
            if pending.isEmpty && deployments.isEmpty { return }
            // Listed once a look: for the evidence on containers, the diagnosis and the nudge.
            let pods: [JSON]
            if let listed { pods = listed } else { pods = try await listPods() }
            // Every look is evidence (a container seen before it runs tells how late this kubelet reports).
            let health = containerHealth(pods, evidence: &evidence)
            if health.restarting.isEmpty, let uptime, !health.ask.isEmpty {
                // Young containers due to say how long they have run (a Job may still be running beside them): the
                // next look believes those that ran long enough.
                await Self.ask(
                    health.ask, uptime, namespace: namespace, clock: ctx.clock, evidence: &evidence, log: ctx.verbose)
                continue
            }
            if pending.isEmpty {
                // A container that starts and exits at once can count as available for an instant: the rollout
                // is believed once every container has run long enough for an exit to have been reported, and
                // none of the deployment's is restarting.
                if health.restarting.isEmpty && health.young.isEmpty {
                    // Last, what Services and ingress controllers route by (`endpointsBehind`).
                    guard let behind = try await endpointsBehind(pods) else { return await recordBelief(pods) }
                    pending.append(behind)
                } else if health.restarting.isEmpty {
                    // Containers that started moments ago: an exit is reported in the kubelet's next round. The
                    // next look is when the first of them is believed, or sooner (an exit is named at once).
                    try await watch.pause(ctx.clock, seconds: max(0.01, min(pause, 0.25, health.believedIn)))
                    continue
                } else {
                    pending += health.restarting
                }
            }
            let problems = try await diagnose(deployments: Array(liveDeployments.values), pods: pods)
            await nudge(pods, seen: &sightings)
            if let fatal = problems.first(where: \.fatal) { throw SoError(fatal.message, hint: fatal.hint) }
            try await refuseWhatCannotFit(problems, since: &unschedulableSince, capacity: &capacity)
            let elapsed = ctx.clock.now().timeIntervalSince(start)
            if elapsed >= timeout {
                let reason = problems.first.map { ": \($0.message)" } ?? ""
                throw SoError(
                    "timed out after \(Int(timeout))s waiting for \(pending.joined(separator: ", "))\(reason)",
                    hint: problems.first?.hint ?? "raise --timeout, or look at 'so deployment --dir \(dir) status'",
                    exitCode: SoError.exitTimeout)
            }
            // Elsewhere an unschedulable pod may yet get a node (an autoscaler): said on the status line.
            let state =
                pending.joined(separator: ", ")
                + (problems.first { $0.unschedulable != nil || $0.shown }.map { " — " + $0.message } ?? "")
            if progress.isLive {
                progress.live("waiting for " + state, elapsed: elapsed)
            } else if state != lastState {
                progress.phase("waiting", state)
            }
            lastState = state
            // Polling: every tenth of a second for the first 3 s (a warm node starts a pod in about 2 s, and a
            // look is three small lists), every quarter second until 5 s, every second until 15 s, then every 2 s.
            try await watch.pause(ctx.clock, seconds: lookIn(pause))
            pause = elapsed < 3 ? 0.1 : elapsed < 5 ? 0.25 : elapsed < 15 ? 1 : 2
        }
    }

    /// One look at the Deployments and Jobs (one list per kind, however many objects: 50 Deployments cost one
    /// request, not 50): what is not done yet, and the Deployments as listed. A Deployment is done when its
    /// rollout is complete as `kubectl rollout status` says, and no pod of it is still ending (a pod of an older
    /// ReplicaSet being deleted can still answer); `pods` is listed for that once its status says so. A Job is
    /// done once its own status says Complete, which is what `kubectl wait --for=condition=complete` and every
    /// later reader see. A failed Job throws, naming why.
    func pendingWorkloads(deployments: [String], jobs: [String], pods: inout [JSON]?) async throws -> (
        [String], [String: JSON]
    ) {
        var pending: [String] = []
        let liveDeployments = deployments.isEmpty ? [:] : try await byName(.deployment)
        let liveJobs = jobs.isEmpty ? [:] : try await byName(.job)
        for name in deployments {
            guard let d = liveDeployments[name] else {
                pending.append("Deployment \(name) (missing)")
                continue
            }
            if let state = Self.deploymentPending(d) {
                pending.append("Deployment \(name) (\(state))")
                continue
            }
            if pods == nil { pods = try await listPods() }
            if let state = Self.podsEnding(d, pods: pods ?? []) { pending.append("Deployment \(name) (\(state))") }
        }
        for name in jobs {
            guard let j = liveJobs[name] else {
                pending.append("Job \(name) (missing)")
                continue
            }
            if Self.jobCondition(j, "Complete") { continue }
            if (j.at("status", "failed")?.int ?? 0) >= 1 || Self.jobCondition(j, "Failed") {
                if pods == nil { pods = try await listPods() }
                let why = try await diagnose(pods: pods ?? []).first { $0.job == name || $0.fatal }
                throw SoError(
                    "Job \(namespace)/\(name) failed" + (why.map { ": \($0.message)" } ?? ""),
                    hint: why?.hint ?? "see 'so deployment --dir \(dir) logs' for its output")
            }
            let succeeded = j.at("status", "succeeded")?.int ?? 0
            pending.append("Job \(name) (\(succeeded >= 1 ? "succeeded, not yet counted complete" : "running"))")
        }
        return (pending, liveDeployments)
    }

    /// Whether a Job's status carries the condition `type` with status True.
    static func jobCondition(_ job: JSON, _ type: String) -> Bool {
        job.at("status", "conditions")?.array.contains { $0["type"]?.string == type && $0["status"]?.string == "True" }
            == true
    }

    /// A pod unschedulable for `unschedulableGrace` seconds on a cluster that cannot grow (no autoscaler), which
    /// asks more than a node has even with nothing else on it, will never run: refused, naming what it asks and
    /// what the node has. One that would fit a free node waits (to the timeout) for the room other pods hold: on a
    /// shared cluster they end. `since`: when each pod was first seen so.
    func refuseWhatCannotFit(
        _ problems: [Problem], since unschedulableSince: inout [String: Date], capacity: inout NodeCapacity?
    ) async throws {
        let stuck = problems.compactMap(\.unschedulable)
        unschedulableSince = unschedulableSince.filter { entry in stuck.contains { $0.name == entry.key } }
        for pod in stuck where unschedulableSince[pod.name] == nil {
            unschedulableSince[pod.name] = ctx.clock.now()
        }
        let due = stuck.filter {
            ctx.clock.now().timeIntervalSince(unschedulableSince[$0.name] ?? .distantFuture) >= Self.unschedulableGrace
        }
        guard !due.isEmpty else { return }
        if capacity == nil { capacity = try await NodeCapacity.read(client) }
        guard let capacity, !capacity.canGrow else { return }
        for pod in due where !capacity.fitsWhenFree(pod) {
            if let problem = problems.first(where: { $0.unschedulable?.name == pod.name }) {
                throw SoError(problem.message + "; " + capacity.explain(pod), hint: capacity.hint(directory: directory))
            }
        }
    }

    func byName(_ type: ResourceType) async throws -> [String: JSON] {
        var out: [String: JSON] = [:]
        for item in try await client.list(type, namespace: namespace, labelSelector: selector) { out[item.name] = item }
        return out
    }

    /// nil when the Deployment's rollout is complete by its status, as `kubectl rollout status` says: its
    /// controller saw this generation, every wanted replica is of the newest template, no replica of an older
    /// one is left (none ending, where the status counts them), and the updated ones are available. Else a short
    /// state ("rolling out (1 of 2 updated)").
    static func deploymentPending(_ d: JSON) -> String? {
        let want = d.at("spec", "replicas")?.int ?? 1
        let generation = d.at("metadata", "generation")?.int ?? 0
        let observed = d.at("status", "observedGeneration")?.int ?? 0
        let replicas = d.at("status", "replicas")?.int ?? 0
        let updated = d.at("status", "updatedReplicas")?.int ?? 0
        let available = d.at("status", "availableReplicas")?.int ?? 0
        let terminating = d.at("status", "terminatingReplicas")?.int ?? 0
        if observed < generation { return "rollout not observed yet" }
        if updated < want { return "rolling out (\(updated) of \(want) updated)" }
        if replicas > updated || terminating > 0 {
            let old = max(replicas - updated, 0) + terminating
            return "rolling out (\(old) old \(old == 1 ? "replica" : "replicas") left)"
        }
        if available < want { return "\(available)/\(want) available" }
        return nil
    }

    /// The pause before the next look: `pause`, or, once a container is proved ready, `provedGrace` at most (the
    /// kubelet is nudged soon after the proof if it is late).
    func lookIn(_ pause: Double) -> Double {
        confirmation?.proved == nil ? pause : min(pause, KubeletNudge.provedGrace)
    }

    /// Marks the pods the kubelet left waiting (`KubeletNudge`); a container proved ready (`ReadyConfirmation`) soon
    /// after the proof, where the kubelet has not said so by then.
    func nudge(_ pods: [JSON], seen: inout KubeletNudge.Sightings) async {
        let proof = confirmation?.proved.map { ($0, seen.age(KubeletNudge.proofKey, now: ctx.clock.now())) }
        await KubeletNudge(ctx: ctx, client: client, namespace: namespace).nudge(pods, seen: &seen, proof: proof)
    }

    /// A state while a pod of the Deployment (its selector's pods, as listed) is still being deleted: a pod of
    /// an older ReplicaSet the rollout replaced still runs until its grace period ends, and a Service or an
    /// ingress controller that has not yet heard of its end can still send it requests. Nil when none is.
    static func podsEnding(_ d: JSON, pods: [JSON]) -> String? {
        guard case .object(let match)? = d.at("spec", "selector", "matchLabels"), !match.isEmpty else { return nil }
        let ending = pods.filter { pod in
            guard pod.at("metadata", "deletionTimestamp") != nil else { return false }
            let labels = pod.labels
            return match.allSatisfy { key, value in labels[key] == value.string }
        }
        if ending.isEmpty { return nil }
        return "rolling out (\(ending.count) old \(ending.count == 1 ? "pod" : "pods") ending)"
    }

    /// Containers of the Deployments' pods (not Jobs'): those that exited and are not running again, and
    /// those not yet believed running (`ContainerEvidence`: a container that exits at once can make its
    /// Deployment count as available for an instant). A container with a readiness probe (compose
    /// `healthcheck:`) is believed once Ready: its probe answered, which says more than having run a
    /// moment. One that exited with an error moments ago and runs again may be about to crash again.
    func containerHealth(_ pods: [JSON], evidence: inout ContainerEvidence) -> (
        restarting: [String], young: [String], believedIn: Double, ask: [Ask]
    ) {
        let now = ctx.clock.now()
        var restarting: [String] = []
        var young: [String] = []
        // How soon the first young container is believed (seconds from now).
        var believedIn = Double.infinity
        var ask: [Ask] = []
        for pod in pods where pod.labels["job-name"] == nil && Self.live(pod) {
            let probed = Self.probedContainers(pod)
            // PID 1 is the container's own first process, unless the pod shares the host's or its pod's.
            let askable =
                uptime != nil && pod.at("spec", "hostPID")?.bool != true
                && pod.at("spec", "shareProcessNamespace")?.bool != true
            let statuses = pod.at("status", "containerStatuses")?.array ?? []
            for c in pod.at("spec", "containers")?.array ?? [] {
                let container = c["name"]?.string ?? "?"
                let status = statuses.first { $0["name"]?.string == container }
                if status?.at("state", "running") == nil { evidence.notRunning(pod: pod.name, container: container) }
            }
            for c in statuses {
                let container = c["name"]?.string ?? "?"
                let name = "pod \(pod.name) container \(container)"
                let restarts = c["restartCount"]?.int ?? 0
                let started = c.at("state", "running", "startedAt")?.string.flatMap(Timestamps.parse)
                let unproved = restarts > 0 || c["ready"]?.bool != true || !probed.contains(container)
                if c["ready"]?.bool != true,
                    c.at("state", "terminated") != nil || (restarts > 0 && c.at("state", "running") == nil)
                {
                    restarting.append(name + " (\(Self.exitWords(c)), restarting)")
                } else if let started, unproved,
                    !(believedBefore ?? []).contains(
                        "\(pod.at("metadata", "uid")?.string ?? pod.name)/\(container)#\(restarts)"),
                    case let left = evidence.timeToBelief(
                        pod: pod.name, container: container, startedAt: started, restarts: restarts, now: now),
                    left > 0
                {
                    young.append(name)
                    believedIn = min(believedIn, left)
                    let start = ContainerEvidence.key(
                        pod: pod.name, container: container, startedAt: started, restarts: restarts)
                    // One with a readiness probe is believed when Ready: its probe says more, and asking it too would
                    // take a processor from the node while it starts.
                    if askable, !probed.contains(container), let when = evidence.timeToAsk(start, now: now) {
                        if when == 0 { ask.append(Ask(pod: pod.name, container: container, start: start)) }
                        believedIn = min(believedIn, when)
                    }
                } else if restarts > 0,
                    let finished = c.at("lastState", "terminated", "finishedAt")?.string.flatMap(Timestamps.parse),
                    c.at("lastState", "terminated", "exitCode")?.int != 0, now.timeIntervalSince(finished) < 15
                {
                    // Exited with an error moments ago and running again: it may be about to crash again.
                    young.append(name)
                    believedIn = min(believedIn, 15 - now.timeIntervalSince(finished))
                }
            }
        }
        return (restarting, young, believedIn, ask)
    }

    /// Asks each container its age (at once, up to 8 at a time) and notes what it said.
    static func ask(
        _ asks: [Ask], _ uptime: ContainerUptime, namespace: String, clock: Clock, evidence: inout ContainerEvidence,
        log: (String) -> Void
    ) async {
        for batch in stride(from: 0, to: asks.count, by: 8).map({ Array(asks[$0..<min($0 + 8, asks.count)]) }) {
            let answers = await withTaskGroup(of: (Ask, UptimeAnswer, Date).self) { group in
                for a in batch {
                    group.addTask {
                        let asked = clock.now()
                        let answer = await uptime.uptime(pod: a.pod, container: a.container, namespace: namespace)
                        return (a, answer, asked)
                    }
                }
                var out: [(Ask, UptimeAnswer, Date)] = []
                for await answer in group { out.append(answer) }
                return out
            }
            for (a, answer, at) in answers {
                evidence.heard(a.start, answer, at: at)
                let name = "pod \(namespace)/\(a.pod) container \(a.container)"
                switch answer {
                case .ran(let age): log("\(name) has run \(String(format: "%.2f", age)) s, by its own account")
                case .notRunning(let why): log("\(name) is not running (\(why)): asked again in a second")
                case .unanswered(let why): log("\(name) did not answer (\(why)): asked again in a second")
                case .cannotTell(let why):
                    log("\(name) cannot say how long it has run (\(why)): the kubelet's next round believes it")
                case .unavailable(let why):
                    log(
                        "containers cannot be asked how long they have run (\(why)): the kubelet's next round believes them"
                    )
                }
            }
        }
    }

    /// The running containers of the Deployments' pods, as `so.dev/believed` names them.
    static func beliefKeys(_ pods: [JSON]) -> Set<String> {
        var keys: Set<String> = []
        for pod in pods where pod.labels["job-name"] == nil && live(pod) {
            let uid = pod.at("metadata", "uid")?.string ?? pod.name
            for c in pod.at("status", "containerStatuses")?.array ?? [] where c.at("state", "running") != nil {
                keys.insert("\(uid)/\(c["name"]?.string ?? "?")#\(c["restartCount"]?.int ?? 0)")
            }
        }
        return keys
    }

    /// Records what this wait believed on the Namespace, for the next start: one request, and none when it is
    /// already recorded.
    func recordBelief(_ pods: [JSON]) async {
        guard let before = believedBefore else { return }
        let keys = Self.beliefKeys(pods)
        guard keys != before else { return }
        // Best effort: without it (a user who may not patch namespaces), the next start looks for itself.
        _ = try? await client.annotate(
            .namespace, name: namespace, namespace: nil,
            [(DeploymentNames.Annotation.believed, keys.sorted().joined(separator: ","))])
    }

    /// A Service whose EndpointSlices do not yet say what its pods are (as just listed): a Ready pod it selects
    /// not listed ready, or a pod listed ready that is no longer running. kube-proxy and ingress controllers route
    /// by these slices, so a request right after the wait reaches the new pods only once they agree. Nil when every
    /// Service of the deployment agrees (two lists: its Services and their slices, labelled as the Services are).
    func endpointsBehind(_ pods: [JSON]) async throws -> String? {
        async let servicesRead = client.list(.service, namespace: namespace, labelSelector: selector)
        async let slicesRead = client.list(.endpointSlice, namespace: namespace, labelSelector: selector)
        let (services, slices) = try await (servicesRead, slicesRead)
        let live = pods.filter { $0.at("metadata", "deletionTimestamp") == nil }
        for service in services {
            guard case .object(let match)? = service.at("spec", "selector"), !match.isEmpty else { continue }
            var listedReady: Set<String> = []
            for slice in slices where slice.labels["kubernetes.io/service-name"] == service.name {
                for e in slice["endpoints"]?.array ?? [] where e.at("conditions", "ready")?.bool != false {
                    if let pod = e.at("targetRef", "name")?.string { listedReady.insert(pod) }
                }
            }
            let selected = live.filter { pod in
                let labels = pod.labels
                return match.allSatisfy { key, value in labels[key] == value.string }
            }
            let ready = Set(
                selected.filter { pod in
                    pod.at("status", "podIP")?.string != nil
                        && (pod.at("status", "conditions")?.array ?? []).contains {
                            $0["type"]?.string == "Ready" && $0["status"]?.string == "True"
                        }
                }.map(\.name))
            if !ready.isSubset(of: listedReady) || !listedReady.isSubset(of: Set(selected.map(\.name))) {
                return "Service \(service.name) (endpoints not yet updated)"
            }
        }
        return nil
    }

    /// The deployment's pods (Jobs' included).
    func listPods() async throws -> [JSON] {
        try await client.list(.pod, namespace: namespace, labelSelector: selector)
    }

    /// The names of a pod's containers that have a readiness probe (compose `healthcheck:`).
    static func probedContainers(_ pod: JSON) -> Set<String> {
        Set(
            (pod.at("spec", "containers")?.array ?? []).filter { $0["readinessProbe"] != nil }.compactMap {
                $0["name"]?.string
            })
    }

    /// A pod that is neither being deleted nor ended: a Deployment's pod the kubelet evicted (the node short of disk
    /// or memory) or refused at admission stays listed, Failed, while its ReplicaSet makes another; its containers
    /// are not restarting, and nothing waits on them.
    static func live(_ pod: JSON) -> Bool {
        guard pod.at("metadata", "deletionTimestamp") == nil else { return false }
        let phase = pod.at("status", "phase")?.string
        return phase != "Failed" && phase != "Succeeded"
    }

    /// How a container's last run ended, in a few words: `exited 1`, `killed for memory (OOMKilled)`, `exited`.
    static func exitWords(_ status: JSON) -> String {
        guard let ended = status.at("state", "terminated") ?? status.at("lastState", "terminated") else {
            return "exited"
        }
        let code = ended["exitCode"]?.int
        switch ended["reason"]?.string {
        case "OOMKilled": return "killed for memory (OOMKilled)"
        case let reason? where reason != "Error" && reason != "Completed":
            return "exited" + (code.map { " \($0)" } ?? "") + " (\(reason))"
        default: return "exited" + (code.map { " \($0)" } ?? "")
        }
    }

    /// How long an evicted pod of the deployment is named while its Deployment waits (an old one stays listed, Failed,
    /// until the cluster's garbage collector takes it).
    static let evictionShown: TimeInterval = 600

    /// A Deployment's pod the kubelet evicted or refused (phase Failed, a `status.reason`), a moment ago: said on the
    /// status line and in a timeout's error, with the node's shortage it names.
    func ended(_ pod: JSON) -> Problem? {
        guard pod.labels["job-name"] == nil, pod.at("metadata", "deletionTimestamp") == nil,
            pod.at("status", "phase")?.string == "Failed", let reason = pod.at("status", "reason")?.string
        else { return nil }
        // When it ended: its DisruptionTarget condition (an eviction), else its Ready condition's last change.
        let conditions = pod.at("status", "conditions")?.array ?? []
        let ending = ["DisruptionTarget", "Ready"].lazy.compactMap { type in
            conditions.first { $0["type"]?.string == type }
        }.first
        let when = ending?["lastTransitionTime"]?.string.flatMap(Timestamps.parse)
        if let when, ctx.clock.now().timeIntervalSince(when) > Self.evictionShown { return nil }
        let message = (pod.at("status", "message")?.string ?? "").replacingOccurrences(of: "\n", with: " ")
            .trimmingCharacters(in: .whitespaces)
        let verb = reason == "Evicted" ? "was evicted" : "was refused by its node (\(reason))"
        return Problem(
            fatal: false, message: "pod \(namespace)/\(pod.name) \(verb)" + (message.isEmpty ? "" : ": \(message)"),
            hint: Self.shortageHint(message)
                ?? "its Deployment makes another pod; see 'kubectl describe pod \(pod.name) -n \(namespace)'",
            shown: true)
    }

    /// The hint for a node short of disk or memory, as the kubelet's eviction or the scheduler's pressure taint
    /// names it; nil for anything else.
    static func shortageHint(_ message: String) -> String? {
        if message.contains("ephemeral-storage") || message.contains("DiskPressure")
            || message.contains("disk-pressure")
        {
            return "the node is short of disk space: free some on it (unused images, logs, volumes; "
                + "'kubectl describe node' says how much it has); its pods are started again once it has room"
        }
        if message.contains("resource: memory") || message.contains("MemoryPressure")
            || message.contains("memory-pressure")
        {
            return "the node is short of memory: stop what else runs there, or lower the spec's resources; "
                + "its pods are started again once it has room"
        }
        return nil
    }

    /// What the deployment's pods (as just listed) and claims report.
    func diagnose(deployments: [JSON] = [], pods: [JSON]) async throws -> [Problem] {
        var problems = Self.replicaFailures(deployments, namespace: namespace, pods: pods, now: ctx.clock.now())
        // A pod being deleted (replaced by a rollout, or by start after it loaded the image it waited on) is
        // not a problem of the deployment's.
        for pod in pods where pod.at("metadata", "deletionTimestamp") == nil {
            let name = pod.name
            let first = problems.count
            let statuses =
                (pod.at("status", "initContainerStatuses")?.array ?? [])
                + (pod.at("status", "containerStatuses")?.array ?? [])
            problems += try await containerProblems(pod, statuses: statuses)
            for cond in pod.at("status", "conditions")?.array ?? []
            where cond["type"]?.string == "PodScheduled" && cond["status"]?.string == "False" {
                let msg = (cond["message"]?.string ?? cond["reason"]?.string ?? "").replacingOccurrences(
                    of: "\n", with: " ")
                // Its volume's node cannot take it: said in one line at once, not after the timeout.
                // A node that is still joining is waited for, and said so.
                if let held = try await VolumeNodeCheck(client: client, namespace: namespace, now: ctx.clock.now())
                    .why(pod)
                {
                    let verb = held.state.fatal ? "cannot run" : "waits"
                    problems.append(
                        Problem(
                            fatal: held.state.fatal, message: "pod \(namespace)/\(name) \(verb): \(held.message)",
                            hint: held.state.hint(held.node), shown: true))
                    continue
                }
                let shortage = Self.shortageHint(msg)
                problems.append(
                    Problem(
                        fatal: false, message: "pod \(namespace)/\(name) cannot be scheduled: \(msg)",
                        hint: msg.contains("PersistentVolumeClaim")
                            ? "a claim the pod mounts is not bound; 'so deployment --dir \(dir) status' names it"
                            : shortage ?? "lower the spec's resources, or free capacity on the cluster",
                        unschedulable: msg.contains("Insufficient ") ? pod : nil,
                        // A node short of disk or memory: said while waiting, for nothing else will say it.
                        shown: shortage != nil))
            }
            let job = pod.labels["batch.kubernetes.io/job-name"] ?? pod.labels["job-name"]
            for i in problems.indices.dropFirst(first) { problems[i].job = job }
        }
        var held: [Problem] = []
        for pvc in try await client.list(
            .persistentVolumeClaim, namespace: namespace,
            labelSelector: selector) where pvc.at("status", "phase")?.string == "Pending"
        {
            let problem = try await pendingClaim(pvc)
            if problem.held { held.append(problem) } else { problems.append(problem) }
        }
        // A claim whose volume another claim holds is why its pod waits: said first (a timeout names the first
        // problem). A claim merely Pending is said last: it may wait for its pod (WaitForFirstConsumer).
        // A pod evicted a moment ago, last: what its replacement says now is the firmer news.
        return problems.filter(\.fatal) + held + problems.filter { !$0.fatal } + pods.compactMap(ended)
    }

    /// A Pending claim: one bound by name (a spec volume's path) to a volume another claim still holds says which;
    /// any other, what usually keeps a claim Pending.
    func pendingClaim(_ pvc: JSON) async throws -> Problem {
        let message = "PersistentVolumeClaim \(namespace)/\(pvc.name) is Pending"
        if let volume = pvc.at("spec", "volumeName")?.string, !volume.isEmpty,
            let pv = try await client.get(.persistentVolume, name: volume, namespace: nil),
            let holder = pv.at("spec", "claimRef"),
            holder["namespace"]?.string != namespace || holder["name"]?.string != pvc.name
                || (holder["uid"]?.string).map({ !$0.isEmpty && $0 != pvc.at("metadata", "uid")?.string }) == true
        {
            let held = "\(holder["namespace"]?.string ?? "?")/\(holder["name"]?.string ?? "?")"
            return Problem(
                fatal: false, held: true,
                message: message
                    + ": its PersistentVolume \(volume) is \(pv.at("status", "phase")?.string ?? "bound"), held by claim \(held)",
                hint:
                    "to keep its data, free it: kubectl patch pv \(volume) --type merge -p '{\"spec\":{\"claimRef\":null}}'; "
                    + "to start empty, remove it: so deployment --dir \(dir) stop --delete-volumes")
        }
        return Problem(
            fatal: false, message: message,
            hint: "the cluster has no default StorageClass, or the claim's PersistentVolume does not match")
    }

    /// How long a quota's refusal of a pod that fits it alone is waited for (the quota's usage is updated after the
    /// pods it counts are gone: a restart's new pod is refused for a moment while the old one is counted).
    static let quotaGrace: TimeInterval = 30

    /// Pods the ReplicaSet could not create (a quota, Pod Security): no pod shows it, only this condition. A quota
    /// that refuses a pod which fits it alone, while pods of the deployment are going away (a restart, a rollout)
    /// or within `quotaGrace` of the refusal, is waited for: its usage still counts pods being replaced. `pods`:
    /// the deployment's pods as listed.
    static func replicaFailures(_ deployments: [JSON], namespace: String, pods: [JSON] = [], now: Date? = nil)
        -> [Problem]
    {
        var problems: [Problem] = []
        let replacing = pods.contains { $0.at("metadata", "deletionTimestamp") != nil }
        for d in deployments.sorted(by: { $0.name < $1.name }) {
            for cond in d.at("status", "conditions")?.array ?? []
            where cond["type"]?.string == "ReplicaFailure" && cond["status"]?.string == "True" {
                let msg = (cond["message"]?.string ?? cond["reason"]?.string ?? "").replacingOccurrences(
                    of: "\n", with: " ")
                let hint =
                    msg.contains("exceeded quota")
                    ? "raise quota: in the deployment's spec.yml (or lower its resources:), then start again"
                    : msg.contains("PodSecurity")
                        ? "the pod breaks the namespace's Pod Security level; see security: in the spec"
                        : "see 'kubectl describe deployment \(d.name) -n \(namespace)'"
                let since = (cond["lastTransitionTime"]?.string).flatMap(Timestamps.parse)
                let recent = now.flatMap { n in since.map { n.timeIntervalSince($0) < quotaGrace } } ?? false
                if msg.contains("exceeded quota"), quotaFitsAlone(msg), replacing || recent {
                    problems.append(
                        Problem(
                            fatal: false,
                            message: "Deployment \(namespace)/\(d.name) waits to create its pods: \(msg) "
                                + "(the quota still counts pods being replaced)",
                            hint: hint, shown: true))
                    continue
                }
                // Nothing runs and nothing can be created: waiting longer changes nothing.
                problems.append(
                    Problem(
                        fatal: (d.at("status", "availableReplicas")?.int ?? 0) == 0,
                        message: "Deployment \(namespace)/\(d.name) cannot create its pods: \(msg)", hint: hint))
            }
        }
        return problems
    }

    /// Whether the pod a quota refused fits every limit alone (`requested` at most `limited`, each resource): then
    /// what the quota counts as `used` refused it. The API server's words: `exceeded quota: q, requested:
    /// limits.cpu=2,limits.memory=4Gi, used: limits.cpu=3, limited: limits.cpu=4,limits.memory=8Gi`. False when
    /// they cannot be read.
    static func quotaFitsAlone(_ message: String) -> Bool {
        func amounts(_ after: String, _ before: String?) -> [String: String]? {
            guard let start = message.range(of: after) else { return nil }
            let end = before.flatMap { message.range(of: $0, range: start.upperBound..<message.endIndex)?.lowerBound }
            var out: [String: String] = [:]
            for part in message[start.upperBound..<(end ?? message.endIndex)].split(separator: ",") {
                let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2, !kv[0].isEmpty else { return nil }
                out[kv[0]] = kv[1]
            }
            return out.isEmpty ? nil : out
        }
        guard let requested = amounts("requested: ", ", used: "), let limited = amounts("limited: ", nil) else {
            return false
        }
        for (key, amount) in requested {
            guard let limit = limited[key] else { continue }
            let cpu = key.hasSuffix("cpu")
            if Quantity.value(amount, cpu: cpu) > Quantity.value(limit, cpu: cpu) { return false }
        }
        return true
    }

    /// What a pod's containers waiting for something say: an image that cannot be pulled, a crash loop (with its
    /// last log lines), a missing Secret or ConfigMap, or anything else they wait for.
    func containerProblems(_ pod: JSON, statuses: [JSON]) async throws -> [Problem] {
        let name = pod.name
        var problems: [Problem] = []
        for c in statuses {
            let container = c["name"]?.string ?? "?"
            guard let waiting = c.at("state", "waiting"), let reason = waiting["reason"]?.string else { continue }
            let message = (waiting["message"]?.string ?? "").replacingOccurrences(of: "\n", with: " ")
            switch reason {
            case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull":
                let image = c["image"]?.string ?? "?"
                let hint =
                    image.hasSuffix(":local")
                    ? "build it ('so build-containers') and start again: kind loads local images"
                    : "check the image name and tag, and the registry's credentials (image-pull-secret)"
                problems.append(
                    Problem(
                        fatal: true,
                        message:
                            "pod \(namespace)/\(name) container \(container) cannot pull image \(image) (\(reason))",
                        hint: hint))
            case "CrashLoopBackOff":
                let tail = try await lastLines(pod: name, container: container)
                let logs = tail.isEmpty ? "" : "; last log lines: \(tail)"
                problems.append(
                    Problem(
                        fatal: true,
                        message: "pod \(namespace)/\(name) container \(container) keeps crashing (CrashLoopBackOff)"
                            + logs,
                        hint: "see 'so deployment --dir \(dir) logs \(container)'"))
            case "CreateContainerConfigError", "CreateContainerError":
                // The kubelet's own cache of Secrets and ConfigMaps not in step yet (a busy node, an object made a
                // moment ago: "failed to sync secret cache"): it tries again at its next sync, so this is waited out.
                let cache = message.contains("failed to sync") && message.contains("cache")
                problems.append(
                    Problem(
                        fatal: !cache,
                        message:
                            "pod \(namespace)/\(name) container \(container) cannot start (\(reason)): \(message)",
                        hint: cache
                            ? "the kubelet has not read its Secrets and ConfigMaps yet; it tries again"
                            : "a Secret, ConfigMap or key it references is missing"))
            default:
                problems.append(
                    Problem(
                        fatal: false,
                        message: "pod \(namespace)/\(name) container \(container) is waiting (\(reason))",
                        hint: message.isEmpty ? "see 'so deployment --dir \(dir) status'" : message))
            }
        }
        return problems
    }

    /// The last lines of the run that crashed (`previous`: under load the kubelet may have started the next run,
    /// whose log holds only its first lines, by the time they are asked for). A kubelet whose own status lags its
    /// runtime serves, as the log, its word that the container it names is gone ("unable to retrieve container
    /// logs for containerd://…"), for seconds on a loaded node: that is asked again, up to 10 times half a second
    /// apart, the current run's log and the previous one's in turn (the current one may have printed the same), and
    /// never shown as the container's lines.
    func lastLines(pod: String, container: String) async throws -> String {
        var options = LogOptions(container: container, tailLines: 5)
        for ask in 0..<10 {
            if ask > 0 { try await ctx.clock.sleep(seconds: 0.5) }
            options.previous = ask % 2 == 0
            var text = ""
            do {
                for try await chunk in client.logs(namespace: namespace, pod: pod, options: options) { text += chunk }
            } catch { return "" }
            let lines = text.split(separator: "\n")
            if lines.count == 1, Self.kubeletLostLogs.contains(where: { lines[0].hasPrefix($0) }) { continue }
            // Nothing yet in a run just started, after the kubelet lost the one before: asked again.
            if lines.isEmpty && ask > 0 { continue }
            return lines.suffix(5).joined(separator: " | ")
        }
        return ""
    }

    /// What a kubelet serves as a container's log when the container its status names is gone: its runtime's word,
    /// or (the container's log file removed with it) the file's path it could not follow (seen on the real node
    /// as a container crashed at once: "failed to try resolving symlinks in path \"…/kubelet-logs/…\": lstat …").
    static let kubeletLostLogs = [
        "unable to retrieve container logs for ", "failed to try resolving symlinks in path ",
    ]
}
