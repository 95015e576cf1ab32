import Foundation
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

    struct Problem {
        var fatal: Bool
        var message: String
        var hint: String
        /// The Job whose pod it is (its `job-name` label), so a failed Job is explained by its own pod.
        var job: String? = nil
        /// A pod the scheduler found no room for (for lack of resources): the pod, as listed.
        var unschedulable: JSON? = nil
    }

    /// How long a container without a readiness probe must have run before its rollout is believed. The kubelet
    /// reports an exit late, later still on a busy node: a container that exits at once was still shown running
    /// at 2 s, and later at 3 s, and start said "started", each once in a CI run on the 2-core real node.
    static let settleSeconds = 5.0

    /// How long this wait must itself have seen a recently started container running (without a probe) before
    /// believing it. A busy kubelet reports the start late, and the exit later still: its own delay is added.
    static let watchSeconds = 2.0

    /// A container started longer ago than this is old enough that `watchSeconds` no longer applies.
    static let recentSeconds = 30.0

    /// How long a pod may stay unschedulable for lack of resources before a cluster that cannot add nodes
    /// is believed (the scheduler retries as other pods go; a namespace being deleted frees its requests).
    static let unschedulableGrace = 3.0

    var dir: String { ShellWords.quote(directory) }

    func wait(for objects: [KubeObject], timeout: Double, progress: ProgressReporter) async throws {
        let deploymentType = ResourceType.deployment
        let jobType = ResourceType.job
        let deployments = objects.filter { $0.isKind(.deployment) }.map(\.name)
        let jobs = objects.filter { $0.isKind(.job) }.map(\.name)
        let start = ctx.clock.now()
        var lastState = ""
        var pause = 0.1
        var unschedulableSince: [String: Date] = [:]
        var capacity: NodeCapacity?
        var seenRunning: [String: Date] = [:]
        while true {
            var pending: [String] = []
            // One list per kind and poll, however many objects (50 Deployments cost one request, not 50).
            let liveDeployments = deployments.isEmpty ? [:] : try await byName(deploymentType)
            let liveJobs = jobs.isEmpty ? [:] : try await byName(jobType)
            for name in deployments {
                guard let d = liveDeployments[name] else { pending.append("Deployment \(name) (missing)"); continue }
                if let state = Self.deploymentPending(d) { pending.append("Deployment \(name) (\(state))") }
            }
            for name in jobs {
                guard let j = liveJobs[name] else { pending.append("Job \(name) (missing)"); continue }
                if (j.at("status", "succeeded")?.int ?? 0) >= 1 { continue }
                let failedCondition = j.at("status", "conditions")?.array.contains { $0["type"]?.string == "Failed" && $0["status"]?.string == "True" }
                if (j.at("status", "failed")?.int ?? 0) >= 1 || failedCondition == true {
                    let why = try await diagnose(pods: try await listPods()).first { $0.job == name || $0.fatal }
                    throw SoError("Job \(namespace)/\(name) failed" + (why.map { ": \($0.message)" } ?? ""),
                                  hint: why?.hint ?? "see 'so deployment --dir \(dir) logs' for its output")
                }
                pending.append("Job \(name) (running)")
            }
            if pending.isEmpty && deployments.isEmpty { return }
            // Listed once a look: for the second look at containers, the diagnosis and the nudge.
            let pods = try await listPods()
            if pending.isEmpty {
                // A container that starts and exits at once can count as available for an instant: the rollout
                // is believed only when a second look, a moment later, finds it still so and no container of
                // the deployment restarting.
                let health = containerHealth(pods, seenRunning: &seenRunning)
                if health.restarting.isEmpty && health.young.isEmpty { return }
                if health.restarting.isEmpty {
                    // Containers that started within the last moments: look again in a second (the kubelet reports an
                    // exit late; a shorter second look missed a crash on the real node).
                    try await ctx.clock.sleep(seconds: 1)
                    continue
                }
                pending += health.restarting
            }
            let problems = try await diagnose(deployments: Array(liveDeployments.values), pods: pods)
            await KubeletNudge(ctx: ctx, client: client, namespace: namespace).nudge(pods)
            if let fatal = problems.first(where: \.fatal) { throw SoError(fatal.message, hint: fatal.hint) }
            let stuck = problems.compactMap(\.unschedulable)
            unschedulableSince = unschedulableSince.filter { entry in stuck.contains { $0.name == entry.key } }
            for pod in stuck where unschedulableSince[pod.name] == nil { unschedulableSince[pod.name] = ctx.clock.now() }
            if let pod = stuck.first(where: { ctx.clock.now().timeIntervalSince(unschedulableSince[$0.name] ?? .distantFuture) >= Self.unschedulableGrace }) {
                if capacity == nil { capacity = try await NodeCapacity.read(client) }
                if let capacity, !capacity.canGrow, let problem = problems.first(where: { $0.unschedulable?.name == pod.name }) {
                    throw SoError(problem.message + "; " + capacity.explain(pod), hint: capacity.hint(directory: directory))
                }
            }
            let elapsed = ctx.clock.now().timeIntervalSince(start)
            if elapsed >= timeout {
                let reason = problems.first.map { ": \($0.message)" } ?? ""
                throw SoError("timed out after \(Int(timeout))s waiting for \(pending.joined(separator: ", "))\(reason)",
                              hint: problems.first?.hint ?? "raise --timeout, or look at 'so deployment --dir \(dir) status'", exitCode: SoError.exitTimeout)
            }
            // Elsewhere an unschedulable pod may yet get a node (an autoscaler): said on the status line.
            let state = pending.joined(separator: ", ") + (problems.first { $0.unschedulable != nil }.map { " — " + $0.message } ?? "")
            if progress.isLive {
                progress.live("waiting for " + state, elapsed: elapsed)
            } else if state != lastState {
                progress.phase("waiting", state)
            }
            lastState = state
            // Polling: every tenth of a second for the first 3 s (a warm node starts a pod in about 2 s, and a
            // look is three small lists), every quarter second until 5 s, every second until 15 s, then every 2 s.
            try await ctx.clock.sleep(seconds: pause)
            pause = elapsed < 3 ? 0.1 : elapsed < 5 ? 0.25 : elapsed < 15 ? 1 : 2
        }
    }

    func byName(_ type: ResourceType) async throws -> [String: JSON] {
        var out: [String: JSON] = [:]
        for item in try await client.list(type, namespace: namespace, labelSelector: selector) { out[item.name] = item }
        return out
    }

    /// nil when available; else a short state.
    static func deploymentPending(_ d: JSON) -> String? {
        let want = d.at("spec", "replicas")?.int ?? 1
        let generation = d.at("metadata", "generation")?.int ?? 0
        let observed = d.at("status", "observedGeneration")?.int ?? 0
        let updated = d.at("status", "updatedReplicas")?.int ?? 0
        let available = d.at("status", "availableReplicas")?.int ?? 0
        if want == 0 { return nil }
        if observed < generation { return "rollout not observed yet" }
        if updated >= want && available >= want { return nil }
        return "\(available)/\(want) available"
    }

    /// Containers of the Deployments' pods (not Jobs'): those that exited and are not running again, and
    /// those running for less than `settleSeconds` (the kubelet reports an exit with some delay) — a container that exits at once can make its Deployment
    /// count as available for an instant, so the rollout is believed only when they have run a little. A recent one
    /// must also have been seen running by this wait for `watchSeconds` (`seenRunning`: when each start was first seen).
    /// A container with a readiness probe (compose `healthcheck:`) is believed once Ready: its probe answered,
    /// which says more than having run a few seconds (and the kubelet probes as soon as it sees it running).
    func containerHealth(_ pods: [JSON], seenRunning: inout [String: Date]) -> (restarting: [String], young: [String]) {
        let now = ctx.clock.now()
        var restarting: [String] = [], young: [String] = []
        for pod in pods where pod.labels["job-name"] == nil && pod.at("metadata", "deletionTimestamp") == nil {
            let probed = Self.probedContainers(pod)
            for c in pod.at("status", "containerStatuses")?.array ?? [] {
                let name = "pod \(pod.name) container \(c["name"]?.string ?? "?")"
                let restarts = c["restartCount"]?.int ?? 0
                let startedAt = c.at("state", "running", "startedAt")?.string
                let started = startedAt.flatMap(Timestamps.parse)
                let unproved = restarts > 0 || c["ready"]?.bool != true || !probed.contains(c["name"]?.string ?? "")
                var watched = Double.infinity
                if let startedAt, let started, now.timeIntervalSince(started) < Self.recentSeconds, unproved {
                    let key = "\(name)@\(startedAt)#\(restarts)"
                    let first = seenRunning[key, default: now]
                    seenRunning[key] = first
                    watched = now.timeIntervalSince(first)
                }
                if c["ready"]?.bool != true, c.at("state", "terminated") != nil || (restarts > 0 && c.at("state", "running") == nil) {
                    restarting.append(name + " (exited, restarting)")
                } else if let started, unproved, now.timeIntervalSince(started) < Self.settleSeconds || watched < Self.watchSeconds {
                    young.append(name)
                } else if restarts > 0, let finished = c.at("lastState", "terminated", "finishedAt")?.string.flatMap(Timestamps.parse),
                          c.at("lastState", "terminated", "exitCode")?.int != 0, now.timeIntervalSince(finished) < 15 {
                    // Exited with an error moments ago and running again: it may be about to crash again.
                    young.append(name)
                }
            }
        }
        return (restarting, young)
    }

    /// The deployment's pods (Jobs' included).
    func listPods() async throws -> [JSON] {
        try await client.list(.pod, namespace: namespace, labelSelector: selector)
    }

    /// The names of a pod's containers that have a readiness probe (compose `healthcheck:`).
    static func probedContainers(_ pod: JSON) -> Set<String> {
        Set((pod.at("spec", "containers")?.array ?? []).filter { $0["readinessProbe"] != nil }.compactMap { $0["name"]?.string })
    }

    /// What the deployment's pods (as just listed) and claims report.
    func diagnose(deployments: [JSON] = [], pods: [JSON]) async throws -> [Problem] {
        var problems: [Problem] = []
        // Pods the ReplicaSet could not create (a quota, Pod Security): no pod shows it, only this condition.
        for d in deployments.sorted(by: { $0.name < $1.name }) {
            for cond in d.at("status", "conditions")?.array ?? [] where cond["type"]?.string == "ReplicaFailure" && cond["status"]?.string == "True" {
                let msg = (cond["message"]?.string ?? cond["reason"]?.string ?? "").replacingOccurrences(of: "\n", with: " ")
                let hint = msg.contains("exceeded quota") ? "raise quota: in the deployment's spec.yml (or lower its resources:), then start again"
                    : msg.contains("PodSecurity") ? "the pod breaks the namespace's Pod Security level; see security: in the spec"
                    : "see 'kubectl describe deployment \(d.name) -n \(namespace)'"
                // Nothing runs and nothing can be created: waiting longer changes nothing.
                problems.append(Problem(fatal: (d.at("status", "availableReplicas")?.int ?? 0) == 0,
                                        message: "Deployment \(namespace)/\(d.name) cannot create its pods: \(msg)", hint: hint))
            }
        }
        // A pod being deleted (replaced by a rollout, or by start after it loaded the image it waited on) is
        // not a problem of the deployment's.
        for pod in pods where pod.at("metadata", "deletionTimestamp") == nil {
            let name = pod.name
            let first = problems.count
            let statuses = (pod.at("status", "initContainerStatuses")?.array ?? []) + (pod.at("status", "containerStatuses")?.array ?? [])
            for c in statuses {
                let container = c["name"]?.string ?? "?"
                guard let waiting = c.at("state", "waiting"), let reason = waiting["reason"]?.string else { continue }
                let message = (waiting["message"]?.string ?? "").replacingOccurrences(of: "\n", with: " ")
                switch reason {
                case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull":
                    let image = c["image"]?.string ?? "?"
                    let hint = image.hasSuffix(":local") ? "build it ('so build-containers') and start again: kind loads local images"
                                                         : "check the image name and tag, and the registry's credentials (image-pull-secret)"
                    problems.append(Problem(fatal: true, message: "pod \(namespace)/\(name) container \(container) cannot pull image \(image) (\(reason))",
                                            hint: hint))
                case "CrashLoopBackOff":
                    let tail = try await lastLines(pod: name, container: container)
                    let logs = tail.isEmpty ? "" : "; last log lines: \(tail)"
                    problems.append(Problem(fatal: true, message: "pod \(namespace)/\(name) container \(container) keeps crashing (CrashLoopBackOff)" + logs,
                                            hint: "see 'so deployment --dir \(dir) logs \(container)'"))
                case "CreateContainerConfigError", "CreateContainerError":
                    problems.append(Problem(fatal: true, message: "pod \(namespace)/\(name) container \(container) cannot start (\(reason)): \(message)",
                                            hint: "a Secret, ConfigMap or key it references is missing"))
                default:
                    problems.append(Problem(fatal: false, message: "pod \(namespace)/\(name) container \(container) is waiting (\(reason))",
                                            hint: message.isEmpty ? "see 'so deployment --dir \(dir) status'" : message))
                }
            }
            for cond in pod.at("status", "conditions")?.array ?? [] where cond["type"]?.string == "PodScheduled" && cond["status"]?.string == "False" {
                let msg = (cond["message"]?.string ?? cond["reason"]?.string ?? "").replacingOccurrences(of: "\n", with: " ")
                problems.append(Problem(fatal: false, message: "pod \(namespace)/\(name) cannot be scheduled: \(msg)",
                                        hint: "lower the spec's resources, or free capacity on the cluster",
                                        unschedulable: msg.contains("Insufficient ") ? pod : nil))
            }
            let job = pod.labels["batch.kubernetes.io/job-name"] ?? pod.labels["job-name"]
            for i in problems.indices.dropFirst(first) { problems[i].job = job }
        }
        for pvc in try await client.list(.persistentVolumeClaim, namespace: namespace,
                                         labelSelector: selector) where pvc.at("status", "phase")?.string == "Pending" {
            problems.append(Problem(fatal: false, message: "PersistentVolumeClaim \(namespace)/\(pvc.name) is Pending",
                                    hint: "the cluster has no default StorageClass, or the claim's PersistentVolume does not match"))
        }
        return problems
    }

    func lastLines(pod: String, container: String) async throws -> String {
        var text = ""
        do {
            for try await chunk in client.logs(namespace: namespace, pod: pod, options: LogOptions(container: container, tailLines: 5)) { text += chunk }
        } catch { return "" }
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }
}

/// The stack's local images: their IDs on this host are read at every start (they go into the pod template
/// of the Deployments that run them, `stamp`, so a rebuilt image rolls its pods), and each is loaded into the
/// kind node when the node lacks it or has an older build (image IDs compared).
struct ImageLoader: Sendable {
    let ctx: SoContext

    /// The pod-template annotation holding the IDs of the local images a Deployment runs.
    static let annotation = "so.dev/image-ids"

    /// The images of the workloads that this host builds: `:local` tags, spec overrides, and every compose
    /// service with build:.
    static func localImages(manifest: Manifest, model: DeploymentModel) -> [String] {
        var images: [String] = []
        for o in manifest.objects where o.isKind(.deployment) || o.isKind(.job) {
            for image in Self.images(in: o.value) where !images.contains(image) { images.append(image) }
        }
        let overrides = Set(model.spec.sections.imageOverrides.map(\.image))
        let built = Set((model.pods + model.jobs).flatMap(\.compose.services).filter { $0.build != nil }
            .map { $0.image ?? LocalImage.name(stack: model.stackName, service: $0.name) })
        return images.filter { $0.hasSuffix(":local") || overrides.contains($0) || built.contains($0) }
    }

    /// The local images' IDs on this host (`docker image inspect`, or the kind provider's engine), in order. An
    /// image not built here is left out (a `:local` one with a warning); without the engine there are none (warned). `also` names images
    /// loaded when this host has them (the spec's ingress controller image, for a host that cannot pull it).
    func ids(manifest: Manifest, model: DeploymentModel, also: [String] = []) async -> [(image: String, id: String)] {
        var out: [(image: String, id: String)] = []
        let images = Self.localImages(manifest: manifest, model: model)
        for image in images + also.filter({ !images.contains($0) }) {
            let mine: ProcessResult
            do {
                let argv = [ctx.kindProvider.cli, "image", "inspect", "--format", "{{.Id}}", image]
                mine = try await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30)
            } catch {
                let engine = ctx.kindProvider.cli
                let hint = engine == "docker" ? "install Docker to load locally built images into kind"
                    : "install \(engine), or unset KIND_EXPERIMENTAL_PROVIDER"
                ctx.diagnostics.warn("cannot check local image \(image): \(engine) is not available", hint: hint)
                return []
            }
            guard mine.exitCode == 0, !mine.stdout.trimmedWhitespace.isEmpty else {
                if image.hasSuffix(":local") {
                    ctx.diagnostics.warn("image \(image) is not built on this host", hint: "run 'so build-containers' before start")
                }
                continue
            }
            out.append((image, mine.stdout.trimmedWhitespace))
        }
        return out
    }

    /// Loads into the kind node each image whose copy there is not the host's. The IDs are compared without
    /// their `sha256:` prefix (crictl shows it; podman's inspect does not).
    /// Returns the images it loaded.
    @discardableResult
    func load(_ ids: [(image: String, id: String)], cluster: String, progress: ProgressReporter) async throws -> [String] {
        let engine = ctx.kindProvider.cli
        var loaded: [String] = []
        for (image, localID) in ids {
            let inspect = [engine, "exec", "\(cluster)-control-plane", "crictl", "inspecti", "-o", "go-template", "--template", "{{.status.id}}", image]
            // An image the node cannot show is loaded (the load reports a failure of its own).
            let node = try? await ctx.processes.run(inspect, workingDirectory: nil, environment: nil, timeout: 30)
            if let node, node.exitCode == 0, Self.digest(node.stdout) == Self.digest(localID) { continue }
            progress.phase("loading image", "\(image) into kind cluster \(cluster)")
            if engine == "docker" {
                try await kind(["load", "docker-image", image, "--name", cluster], image: image, cluster: cluster)
            } else {
                try await viaArchive(image, id: localID, engine: engine, cluster: cluster)
            }
            loaded.append(image)
        }
        return loaded
    }

    /// `kind load docker-image` reads the image through the docker CLI whatever the provider, so an image of
    /// podman's or nerdctl's store goes through an archive: `<engine> save`, then `kind load image-archive`.
    /// podman names a short reference `localhost/…` in its archive, which the node would not match to the pod's
    /// image: the archive carries the qualified name the node resolves (`docker.io/…`), tagged for the save only.
    private func viaArchive(_ image: String, id: String, engine: String, cluster: String) async throws {
        let root = ctx.temporaryRoot
        let dir = try ctx.fs.temporaryDirectory(beside: Path.join(root, "so-image"), prefix: "so-image")
        let archive = Path.join(dir, "image.tar")
        defer { try? ctx.fs.remove(archive); try? ctx.fs.remove(dir) }  // best effort: a scratch dir in the temp dir
        var ref = image
        var untag: [String]?
        if engine == "podman", ImageReference.qualified(image) != image {
            ref = ImageReference.qualified(image)
            let inspect = [engine, "image", "inspect", "--format", "{{.Id}}", ref]
            // Not there (or not readable): tagged below, and untagged after the save.
            let there = try? await ctx.processes.run(inspect, workingDirectory: nil, environment: nil, timeout: 30)
            if there?.exitCode != 0 || Self.digest(there?.stdout ?? "") != Self.digest(id) {
                try await engineRun([engine, "tag", image, ref], what: "tag image \(image) as \(ref)")
                if there?.exitCode != 0 { untag = [engine, "untag", image, ref] }
            }
        }
        let loaded: Result<Void, Error>
        do {
            try await engineRun([engine, "save", "-o", archive, ref], what: "save image \(image) from \(engine)")
            try await kind(["load", "image-archive", archive, "--name", cluster], image: image, cluster: cluster)
            loaded = .success(())
        } catch { loaded = .failure(error) }
        if let untag {
            let r = try? await ctx.processes.run(untag, workingDirectory: nil, environment: nil, timeout: 30)
            if r?.exitCode != 0 {
                ctx.diagnostics.warn("cannot remove the tag \(ref) that loading image \(image) added",
                                     hint: "remove it with '\(untag.joined(separator: " "))'")
            }
        }
        try loaded.get()
    }

    private func engineRun(_ argv: [String], what: String) async throws {
        let r = try await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 600)
        guard r.exitCode == 0 else { throw SoError("cannot \(what): \(r.lastErrorLine)", hint: "check '\(argv[0]) image ls' lists it") }
    }

    private func kind(_ args: [String], image: String, cluster: String) async throws {
        let r = try await ctx.processes.run(["kind"] + args, workingDirectory: nil, environment: ctx.environment, timeout: 600)
        guard r.exitCode == 0 else {
            throw SoError("cannot load image \(image) into kind cluster \(cluster): \(r.lastErrorLine)",
                          hint: "run 'kind \(args.joined(separator: " "))' by hand to see more")
        }
    }

    static func digest(_ id: String) -> String {
        let t = id.trimmedWhitespace
        return t.hasPrefix("sha256:") ? String(t.dropFirst(7)) : t
    }

    /// `objects` with each Deployment that runs a local image annotated, in its pod template, with the
    /// IDs of those images: a rebuilt image (a new ID) changes the Deployment, which is applied and rolls.
    static func stamp(_ objects: [KubeObject], ids: [(image: String, id: String)]) -> [KubeObject] {
        guard !ids.isEmpty else { return objects }
        return objects.map { o in
            guard o.isKind(.deployment) else { return o }
            let used = Set(images(in: o.value))
            let mine = ids.filter { used.contains($0.image) }
            guard !mine.isEmpty else { return o }
            var out = o
            let value = mine.map { "\($0.image)@\($0.id)" }.joined(separator: ",")
            let path: ArraySlice<String> = ["template", "metadata", "annotations", annotation]
            out.body = out.body.map { key, v in key == "spec" ? (key, setting(v, path, .string(value))) : (key, v) }
            return out
        }
    }

    /// `value` with `path` (mapping keys, made when missing) set to `leaf`.
    static func setting(_ value: YValue, _ path: ArraySlice<String>, _ leaf: YValue) -> YValue {
        guard let key = path.first else { return leaf }
        var pairs: [(String, YValue)] = []
        if case .map(let p) = value { pairs = p }
        if let i = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[i].1 = setting(pairs[i].1, path.dropFirst(), leaf)
        } else {
            pairs.append((key, setting(.null, path.dropFirst(), leaf)))
        }
        return .map(pairs)
    }

    static func images(in value: YValue) -> [String] {
        var out: [String] = []
        func walk(_ v: YValue) {
            switch v {
            case .map(let pairs):
                for (k, x) in pairs {
                    if k == "image", case .string(let s) = x { out.append(s) } else { walk(x) }
                }
            case .list(let items): items.forEach(walk)
            default: break
            }
        }
        walk(value)
        return out
    }
}

/// The cluster's nodes as far as an unschedulable pod is concerned: whether nodes can be added (not on kind,
/// nor on a cluster whose nodes no cloud provider made) and what each offers.
struct NodeCapacity {
    var nodes: [(name: String, cpu: String, memory: String)]
    var canGrow: Bool

    static func read(_ client: ClusterClient) async throws -> NodeCapacity? {
        // A user who may not list nodes gets no capacity note (the wait goes on without it).
        guard let listed = try? await client.list(.node, namespace: nil, labelSelector: nil),
              !listed.isEmpty else { return nil }
        // kind's nodes say kind://; bare nodes (kubeadm, the kit) say nothing: neither grows by itself.
        let fixed = listed.allSatisfy { n in
            let provider = n.at("spec", "providerID")?.string ?? ""
            return provider.isEmpty || provider.hasPrefix("kind://")
        }
        return NodeCapacity(nodes: listed.map { n in
            (n.name, n.at("status", "allocatable", "cpu")?.string ?? "?", n.at("status", "allocatable", "memory")?.string ?? "?")
        }, canGrow: !fixed)
    }

    /// What the pod asks for, container by container, against what the nodes have in all.
    func explain(_ pod: JSON) -> String {
        var asks: [String] = []
        for c in (pod.at("spec", "initContainers")?.array ?? []) + (pod.at("spec", "containers")?.array ?? []) {
            let r = c.at("resources", "requests")
            let parts = [r?["cpu"]?.string.map { "cpu \($0)" }, r?["memory"]?.string.map { "memory \($0)" }].compactMap { $0 }
            if !parts.isEmpty { asks.append("\(c["name"]?.string ?? "?") requests \(parts.joined(separator: ", "))") }
        }
        let offer = nodes.map { "\($0.name) has cpu \($0.cpu), memory \($0.memory) allocatable in all" }.joined(separator: "; ")
        return (asks.isEmpty ? "" : asks.joined(separator: ", ") + "; ") + offer + " (the cluster cannot add nodes)"
    }

    func hint(directory: String) -> String {
        "lower resources: in \(Path.join(directory, "spec.yml")) (e.g. resources: {containers: {NAME: {reservations: {cpus: '0.25', memory: 256M}}}}), "
            + "or stop deployments you no longer need ('so deployment list')"
    }
}
