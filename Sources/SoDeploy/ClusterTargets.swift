import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

package struct ClusterTargets {
    let ctx: SoContext

    package init(ctx: SoContext) { self.ctx = ctx }

    func resolve(_ model: DeploymentModel, _ options: ClusterOptions, allowCreate: Bool) async throws -> ClusterTarget {
        if let target = try await find(model, options, allowCreate: allowCreate) { return target }
        return try await createKind(model)
    }

    /// The one rule every verb uses to choose its cluster, in kubectl's spirit with the deployment's own
    /// first: `--kubeconfig`/`--context` > the deployment's own (`kubeconfig.yml`, or its kind cluster when
    /// it runs) > `SO_KUBECONFIG` > the host's kind cluster > `$KUBECONFIG`'s (else `~/.kube/config`'s)
    /// current context. nil when nothing answers and this `start` may create the deployment's kind cluster
    /// (`createKind`); otherwise an error naming everything tried.
    func find(_ model: DeploymentModel?, _ options: ClusterOptions, allowCreate: Bool) async throws -> ClusterTarget? {
        var tried: [String] = []
        if options.kubeconfig != nil || options.context != nil { return try explicit(options) }
        tried.append("--kubeconfig/--context (not given)")
        // `kind get clusters`, read at most once; unavailable when kind is not installed or cannot reach its engine.
        var listing: KindListing?
        func kindClustersOnce() async throws -> KindListing {
            if let listing { return listing }
            let l = try await kindListing()
            listing = l
            return l
        }
        // A directory written from the record holds no kubeconfig and names clusters whoever wrote it chose: its
        // cluster is the one the record was found in (found as kubectl finds it), never one it names or creates.
        let fromRecord = model.map { RecordFiles.step(in: $0.directory, fs: ctx.fs)?.fromRecord == true } ?? false
        let ownKubeconfigFile = model.map { ctx.fs.isFile(Path.join($0.directory, "kubeconfig.yml")) } ?? false
        if let model, options.deploymentsOwn, !fromRecord || (model.deployTo == .k8s && ownKubeconfigFile) {
            if model.deployTo == .k8s { return try ownKubeconfig(model) }
            let wanted = model.spec.kindClusterName ?? model.identity.clusterID
            // kind writes kind-<name> into the user's kubeconfig when it creates a cluster and removes it when it
            // deletes one: with the deployment's own cluster there, kind (which asks docker) is not needed.
            if let c = Kubeconfig.userContext(
                "kind-\(wanted)", environment: ctx.environment, fs: ctx.fs, diagnostics: ctx.diagnostics)
            {
                try await checkNode(model, cluster: wanted)
                return ClusterTarget(connection: c, kindCluster: wanted, fromUserKubeconfig: true)
            }
            let own = try await kindClustersOnce()
            switch own {
            case .listed(let clusters) where clusters.contains(wanted):
                try await checkNode(model, cluster: wanted)
                return try await kindTarget(wanted)
            case .listed: tried.append("the deployment's kind cluster '\(wanted)' (not running)")
            case .notInstalled, .failed: tried.append("the deployment's kind cluster '\(wanted)' (\(own.why))")
            }
        }
        if let file = ctx.environment["SO_KUBECONFIG"], !file.isEmpty {
            return try explicit(ClusterOptions(kubeconfig: file))
        }
        tried.append("SO_KUBECONFIG (not set)")
        if fromRecord, model?.deployTo == .k8s, let target = try userCurrentContext(model, kind: .notInstalled) {
            return target
        }
        let kind = try await kindClustersOnce()
        switch kind {
        case .listed(let clusters) where !clusters.isEmpty:
            ctx.say("using the host's kind cluster '\(clusters[0])' (one cluster per host)")
            if let model { try await checkNode(model, cluster: clusters[0]) }
            return try await kindTarget(clusters[0])
        case .listed: tried.append("the host's kind clusters (none running)")
        // With a deployment, kind's answer was given for its own cluster just above.
        case .notInstalled, .failed:
            tried.append("the host's kind clusters (" + (model == nil ? kind.why : "the same") + ")")
        }
        // A kind deployment that `start` may create its cluster for: created rather than sent elsewhere.
        if let model, model.deployTo == .k8sKind, allowCreate, !fromRecord, options.performClusterManagement,
            case .listed = kind
        {
            return nil
        }
        if let target = try userCurrentContext(model, kind: kind) { return target }
        tried.append("$KUBECONFIG and ~/.kube/config (no kubeconfig naming a context)")
        return try inClusterOrNone(kind: kind, tried: tried)
    }

    /// A `deploy-to: k8s` deployment's own kubeconfig (kubeconfig.yml in its directory).
    func ownKubeconfig(_ model: DeploymentModel) throws -> ClusterTarget {
        let kc = Path.join(model.directory, "kubeconfig.yml")
        guard ctx.fs.isFile(kc) else {
            throw SoError(
                "\(kc) is missing",
                hint: "run 'so deploy create --update' with the spec's kube-config, or pass --kubeconfig")
        }
        let c = try Kubeconfig.resolve(
            explicit: kc, context: nil, environment: ctx.environment, fs: ctx.fs, diagnostics: ctx.diagnostics)
        return ClusterTarget(connection: c, kindCluster: nil, kubeconfigFile: kc)
    }

    /// The current context of the user's kubeconfig, when a kubeconfig names one (a kind deployment sent there
    /// because kind could not answer says so); nil otherwise.
    func userCurrentContext(_ model: DeploymentModel?, kind: KindListing) throws -> ClusterTarget? {
        guard Kubeconfig.userFilesNameAContext(environment: ctx.environment, fs: ctx.fs) else { return nil }
        let c = try Kubeconfig.resolve(
            explicit: nil, context: nil, environment: ctx.environment, fs: ctx.fs, diagnostics: ctx.diagnostics)
        if let model, model.deployTo == .k8sKind, case .failed = kind {
            ctx.diagnostics.warn(
                "the host's kind clusters cannot be listed (\(kind.why)); using context \(c.contextName) of the user's kubeconfig",
                hint:
                    "start the container engine kind uses (docker, or the one KIND_EXPERIMENTAL_PROVIDER names) to deploy to kind"
            )
        }
        return ClusterTarget(connection: c, kindCluster: nil)
    }

    /// The pod's service account when `so` runs in a pod (as kubectl); else the error naming everything tried.
    func inClusterOrNone(kind: KindListing, tried: [String]) throws -> ClusterTarget {
        var tried = tried
        // In a pod, as kubectl: the pod's service account when no kubeconfig names anything.
        if Kubeconfig.inClusterPossible(environment: ctx.environment, fs: ctx.fs) {
            return ClusterTarget(
                connection: try Kubeconfig.inCluster(environment: ctx.environment, fs: ctx.fs), kindCluster: nil)
        }
        let inPod = ctx.environment["KUBERNETES_SERVICE_HOST"]?.isEmpty == false
        let token = Path.join(Kubeconfig.serviceAccountDirectory(environment: ctx.environment), "token")
        tried.append("the pod's service account (" + (inPod ? "no token at \(token)" : "not in a pod") + ")")
        let kindStep: String
        if case .failed = kind {
            kindStep =
                "or start \(ctx.kindProvider.cli) (kind's engine) and run 'so deployment --dir D start' to create the host's cluster"
        } else {
            kindStep = "or install kind and run 'so deployment --dir D start' to create the host's cluster"
        }
        throw SoError(
            "no cluster to use; tried " + tried.joined(separator: ", "),
            hint: "pass --kubeconfig FILE (and --context NAME), set SO_KUBECONFIG, " + kindStep,
            exitCode: SoError.exitUnreachable)
    }

    /// The cluster of commands that span deployments (`deployment list`, `cleanup`, `down`): the same rule
    /// without a deployment.
    package func shared(_ options: ClusterOptions) async throws -> ClusterTarget {
        guard let target = try await find(nil, options, allowCreate: false) else {
            throw SoError("no cluster to use", hint: "pass --kubeconfig FILE", exitCode: SoError.exitUnreachable)
        }
        return target
    }

    /// The host's kind clusters, or nil when kind is not installed; kind's failure is an error here (creating
    /// a cluster, or reaching one by kind's CLI, needs kind working).
    func installedKindClusters() async throws -> [String]? {
        switch try await kindListing() {
        case .listed(let clusters): return clusters
        case .notInstalled: return nil
        case .failed(let line):
            throw SoError("cannot list kind clusters: \(line)", hint: "run 'kind get clusters' by hand to see more")
        }
    }

    /// The host's kind clusters as `find` reads them: a kind that is missing or cannot reach its container
    /// engine (docker stopped) says why instead of failing, so a cluster named another way is still found.
    /// (A timeout or an interrupt is still thrown.)
    func kindListing() async throws -> KindListing {
        let r: ProcessResult
        do {
            r = try await ctx.processes.run(
                ["kind", "get", "clusters"], workingDirectory: nil, environment: ctx.environment, timeout: 60)
        } catch let e as SoError where e.missingProgram == "kind" {
            return .notInstalled
        }
        return r.exitCode == 0 ? .listed(Self.clusters(listed: r.stdout)) : .failed(r.lastErrorLine)
    }

    /// `--kubeconfig` (else the user's kubeconfig files) at `--context` (else the current context).
    func explicit(_ options: ClusterOptions) throws -> ClusterTarget {
        let file = options.kubeconfig.map(ctx.absolute)
        let c = try Kubeconfig.resolve(
            explicit: file, context: options.context, environment: ctx.environment, fs: ctx.fs,
            diagnostics: ctx.diagnostics)
        return ClusterTarget(connection: c, kindCluster: nil, kubeconfigFile: file)
    }

    /// The names in `kind get clusters` output. kind has no machine-readable form of this list: with no
    /// cluster it prints a sentence ("No kind clusters found.", on stderr in current versions, on stdout
    /// in some older ones), which is the one line read by its text, here only.
    static func clusters(listed output: String) -> [String] {
        output.split(separator: "\n").map { $0.trimmedSpaces }.filter {
            !$0.isEmpty && !$0.hasPrefix("No kind clusters")
        }
    }

    /// A kind cluster reached through the `kind-<name>` context kind wrote into the user's kubeconfig (as
    /// laconic-so and kubectl reach it), else through the kubeconfig `kind get kubeconfig` prints (which
    /// asks docker twice: slower, but right even when the user's kubeconfig lacks the cluster).
    func kindTarget(_ name: String, created: Bool = false) async throws -> ClusterTarget {
        if !created,
            let c = Kubeconfig.userContext(
                "kind-\(name)", environment: ctx.environment, fs: ctx.fs, diagnostics: ctx.diagnostics)
        {
            return ClusterTarget(connection: c, kindCluster: name, fromUserKubeconfig: true)
        }
        return try await kindCLITarget(name, created: created)
    }

    /// A kind cluster reached through the kubeconfig kind prints for it.
    func kindCLITarget(_ name: String, created: Bool = false) async throws -> ClusterTarget {
        let kubeconfig = try await run(
            ["kind", "get", "kubeconfig", "--name", name], what: "read the kubeconfig of kind cluster \(name)")
        let c = try Kubeconfig.resolve(
            text: kubeconfig, label: "kind get kubeconfig --name \(name)", context: "kind-\(name)", fs: ctx.fs,
            diagnostics: ctx.diagnostics)
        return ClusterTarget(connection: c, kindCluster: name, createdCluster: created)
    }

    /// Creates the host's kind cluster from the deployment's kind-config.yml.
    /// The node image is the one kind-config.yml names (`kind-node-image:`); kind runs on the engine
    /// `KIND_EXPERIMENTAL_PROVIDER` names, which it reads from the environment it is given.
    func createKind(_ model: DeploymentModel) async throws -> ClusterTarget {
        let wanted = model.spec.kindClusterName ?? model.identity.clusterID
        let config = Path.join(model.directory, "kind-config.yml")
        let provider = ctx.kindProvider.cli
        let details = [
            model.spec.kindNodeImage.map { "node image \($0)" }, provider == "docker" ? nil : "provider \(provider)",
        ].compactMap { $0 }
        // One cluster per host, made by one run at a time: under the host's lock, a cluster that another run
        // made since `find` looked (whatever its deployment named it) is used, not joined by a second one.
        return try await ctx.hostLocks.holding("kind-cluster") { _ in
            if let made = try await installedKindClusters()?.first {
                ctx.say("using kind cluster '\(made)', which another so run created meanwhile (one cluster per host)")
                try await checkNode(model, cluster: made)
                return try await kindTarget(made)
            }
            ctx.say(
                "creating kind cluster '\(wanted)'\(details.isEmpty ? "" : " (" + details.joined(separator: ", ") + ")") (takes a minute or two)…"
            )
            _ = try await run(
                ["kind", "create", "cluster", "--name", wanted, "--config", config],
                what: "create kind cluster \(wanted)", timeout: 900)
            return try await kindTarget(wanted, created: true)
        }
    }

    /// What a running kind cluster must match: its mounts (refused when one is missing), its image and its
    /// worker count (reported). The mounts are looked for on the node that holds them in the running cluster (its
    /// first worker when it has workers), as start pins the path volumes there, whatever the spec now asks.
    /// The nodes are listed when they matter: the spec asks for workers, or it has host paths to mount.
    func checkNode(_ model: DeploymentModel, cluster: String) async throws {
        let mounts = !KindMounts.required(model, home: ctx.fs.homeDirectory).isEmpty
        let workers = model.spec.kindWorkers > 0 || mounts ? await kindWorkers(cluster) : nil
        // Said first: a mount missing from the running cluster is refused just below.
        if let workers, workers != model.spec.kindWorkers {
            let wanted = model.spec.kindWorkers
            ctx.diagnostics.warn(
                "kind cluster '\(cluster)' has \(workers) \(English.plural("worker node", workers)), not the spec's "
                    + "kind-workers \(wanted)",
                hint: "kind sets the nodes only at creation: 'kind delete cluster --name \(cluster)', then start again "
                    + "to create it with \(wanted) \(English.plural("worker", wanted))",
                at: SourceLocation(file: model.spec.path))
        }
        try await checkMounts(model, cluster: cluster, workers: workers ?? model.spec.kindWorkers)
        await checkNodeImage(model, cluster: cluster)
    }

    /// The worker nodes of the running kind cluster (`kind get nodes`); nil when kind cannot list them.
    func kindWorkers(_ cluster: String) async -> Int? {
        let argv = ["kind", "get", "nodes", "--name", cluster]
        // nil when it fails: the spec's count is used instead, and the count is not checked.
        guard
            let r = try? await ctx.processes.run(
                argv, workingDirectory: nil, environment: ctx.environment, timeout: 60),
            r.exitCode == 0
        else { return nil }
        return r.stdout.split(separator: "\n").filter { $0.trimmedSpaces.hasPrefix("\(cluster)-worker") }.count
    }

    /// kind sets the node image only when a cluster is created: a running node made from another image than
    /// the spec's `kind-node-image` is reported (with how to recreate it), not refused.
    func checkNodeImage(_ model: DeploymentModel, cluster: String) async {
        guard let wanted = model.spec.kindNodeImage else { return }
        let engine = ctx.kindProvider.cli
        let node = "\(cluster)-control-plane"
        let argv = [engine, "inspect", "--format", "{{.Config.Image}}", node]
        // Warned just below: the image is then not checked.
        guard let r = try? await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30),
            r.exitCode == 0, !r.stdout.trimmedWhitespace.isEmpty
        else {
            ctx.diagnostics.warn(
                "cannot read the image of kind node \(node) (\(engine) inspect failed); kind-node-image \(wanted) is not checked",
                hint: "check '\(engine) ps'")
            return
        }
        let running = r.stdout.trimmedWhitespace
        if !ImageReference.same(running, wanted) {
            ctx.diagnostics.warn(
                "kind cluster '\(cluster)' runs node image \(running), not the spec's kind-node-image \(wanted)",
                hint: "kind sets the image only at creation: 'kind delete cluster --name \(cluster)', "
                    + "then start again to create it with \(wanted)",
                at: SourceLocation(file: model.spec.path))
        }
    }

    /// kind applies extraMounts only when a cluster is created: refuse to start when a mount the
    /// deployment needs is not active on the running node.
    func checkMounts(_ model: DeploymentModel, cluster: String, workers: Int) async throws {
        let needed = KindMounts.required(model, home: ctx.fs.homeDirectory)
        guard !needed.isEmpty else { return }
        let engine = ctx.kindProvider.cli
        let node = KindConfig.mountNode(cluster: cluster, workers: workers)
        let argv = [engine, "inspect", "--format", "{{json .Mounts}}", node]
        // Warned just below: the mounts are then not checked.
        guard let r = try? await ctx.processes.run(argv, workingDirectory: nil, environment: nil, timeout: 30),
            r.exitCode == 0, let json = try? JSON.parse(Data(r.stdout.utf8))
        else {
            ctx.diagnostics.warn(
                "cannot inspect the mounts of kind node \(node) (\(engine) inspect failed); volumes with host paths may "
                    + "not be visible",
                hint: "check '\(engine) ps'")
            return
        }
        let active = json.array.map { ($0["Source"]?.string ?? "", $0["Destination"]?.string ?? "") }
        let missing = needed.filter { m in
            !active.contains { Path.normalize($0.0) == m.hostPath && Path.normalize($0.1) == m.containerPath }
        }
        if !missing.isEmpty {
            let mounts = missing.map { "\($0.hostPath) → \($0.containerPath)" }.joined(separator: ", ")
            throw SoError(
                "kind cluster '\(cluster)' lacks the mounts this deployment needs: " + mounts,
                hint: "kind applies mounts only at creation: set kind-mount-root to the cluster's umbrella mount, "
                    + "or recreate the cluster with this deployment's kind-config.yml")
        }
    }

    @discardableResult
    func run(_ args: [String], what: String, timeout: Double = 60) async throws -> String {
        // kind gets the environment `so` was given (KIND_EXPERIMENTAL_PROVIDER, KIND_EXPERIMENTAL_DOCKER_NETWORK, DOCKER_HOST …).
        let r = try await ctx.processes.run(args, workingDirectory: nil, environment: ctx.environment, timeout: timeout)
        guard r.exitCode == 0 else {
            throw SoError(
                "cannot \(what): \(r.lastErrorLine)", hint: "run '\(args.joined(separator: " "))' by hand to see more")
        }
        return r.stdout
    }
}
