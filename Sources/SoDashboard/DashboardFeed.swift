import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoWorkspace

/// The one reader of the cluster behind every open page: one watch per kind (namespaces, Deployments and pods
/// that `so` labels, in every namespace) marks the view stale, and one re-read (two lists, as `deployment list`
/// makes, and the pods) makes the next snapshot, at most every `minimumInterval`; pages are told the new
/// version and draw from the snapshot. Where a watch fails it reads every 2 s. Workspaces' tasks live
/// in their containers: they are read with one `kubectl exec` each, often while a task is queued or running or
/// a page of the workspace is open, rarely otherwise, a few at a time.
public actor DashboardFeed {
    public nonisolated let ctx: SoContext
    public nonisolated let client: ClusterClient
    let kubectlFlags: [String]
    /// What the cluster is called on the pages (`kind:so` or the kubeconfig's context).
    public nonisolated let clusterName: String
    public private(set) var snapshot = DashboardSnapshot()
    var stale = true
    var subscribers: [UUID: AsyncStream<Int>.Continuation] = [:]
    /// Open pages of each namespace (a workspace's are read often, and its running task's output too).
    var watching: [String: Int] = [:]
    var details: [String: (version: Int, detail: DeploymentDetail)] = [:]
    /// The workspaces a lane is reading now.
    var reading: Set<String> = []
    /// The kinds whose watch the server does not keep (the read loop reads every 2 s while there is one).
    var failing: Set<String> = []
    /// Whether the GitHub loop's state is read (`so dashboard` with the webhook or the loop's config).
    public nonisolated let github: Bool
    /// Open GitHub pages (the loop's state is read every 2 s while there is one, every 30 s otherwise).
    var githubPages = 0
    /// The loop's state should be read at once (a page opened, a delivery stored).
    var githubStale = true

    /// The shortest time between two re-reads of the cluster (a busy cluster changes many times a second).
    public var minimumInterval = 0.2
    /// How often a workspace without running tasks or open pages has its tasks read again.
    public var quietInterval = 30.0
    /// How many workspaces' containers each lane reads at once.
    public var concurrentReads = 4

    public init(
        ctx: SoContext, client: ClusterClient, kubectlFlags: [String], clusterName: String, github: Bool = false
    ) {
        self.ctx = ctx
        self.client = client
        self.kubectlFlags = kubectlFlags
        self.clusterName = clusterName
        self.github = github
        snapshot.github.receiver = DeliveryCounts(since: ctx.clock.now())
    }

    /// Watches and reads until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for type in [ResourceType.namespace, .deployment, .pod] {
                group.addTask { await self.watch(type) }
            }
            group.addTask { await self.readLoop() }
            group.addTask { await self.workspaceLoop() }
            if github { group.addTask { await self.githubLoop() } }
        }
    }

    /// The snapshot's versions from now on (the current one first): what an open page's event stream sends.
    public func updates() -> AsyncStream<Int> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.yield(snapshot.version)
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    /// How many pages' event streams are open.
    public var subscriberCount: Int { subscribers.count }

    /// A page of `namespace` opened (true) or closed (false).
    public func watch(namespace: String, _ open: Bool) {
        watching[namespace, default: 0] += open ? 1 : -1
        if watching[namespace, default: 0] <= 0 { watching[namespace] = nil }
    }

    /// Marks the view stale (after an action from a page: its effect shows without waiting for a watch).
    public func touch() { stale = true }

    /// One kind's watch, made again when it ends. A watch the server ends at once without an event (refused, or
    /// its watch cache is behind: "Too large resource version") is tried again later and later (up to 30 s);
    /// meanwhile the read loop reads every 2 s, so a page still changes within seconds.
    private func watch(_ type: ResourceType) async {
        var delay = 1.0
        while !Task.isCancelled {
            let began = ctx.clock.now()
            var heard = false
            do {
                for try await _ in client.watchAll(
                    type, labelSelector: DeploymentNames.Label.managedBySoSelector, seconds: 290)
                {
                    heard = true
                    stale = true
                }
            } catch {
                // A watch refused or cut: the read loop's own reads say what is wrong (on every page); this one
                // is made again.
            }
            let healthy = heard || ctx.clock.now().timeIntervalSince(began) >= 60
            if healthy { failing.remove(type.plural) } else { failing.insert(type.plural) }
            delay = healthy ? 1 : min(delay * 2, 30)
            stale = true
            try? await Task.sleep(for: .seconds(delay))  // cancelled: the loop ends
        }
    }

    private func readLoop() async {
        var beat = ctx.clock.now()
        while !Task.isCancelled {
            if !failing.isEmpty, ctx.clock.now().timeIntervalSince(snapshot.readAt ?? .distantPast) >= 2 {
                stale = true
            }
            if stale {
                stale = false
                await read()
            }
            // Every 15 s each stream hears the version again (the page ignores it): a page gone is noticed.
            if ctx.clock.now().timeIntervalSince(beat) >= 15 {
                beat = ctx.clock.now()
                for s in subscribers.values { s.yield(snapshot.version) }
            }
            try? await Task.sleep(for: .seconds(minimumInterval))  // cancelled: the loop ends
        }
    }

    /// Reads what `deployment list` reads, and the pods; a new version when anything a page shows changed.
    public func read() async {
        var listings: [DeploymentListing]?
        var pods: [String: [PodSummary]] = [:]
        var problem: String?
        do {
            listings = try await ListAction(ctx).list(client)
            for p in try await client.list(
                .pod, namespace: nil, labelSelector: DeploymentNames.Label.managedBySoSelector, keeping: Self.podShape)
            {
                pods[p.namespace ?? "", default: []].append(PodSummary(p))
            }
        } catch {
            problem = "\(error)"
        }
        // The snapshot as it is now (the lanes may have read workspaces while this read waited), with what was read.
        var next = snapshot
        if let listings {
            next.listings = listings
            next.pods = pods.mapValues { $0.sorted { $0.name < $1.name } }
        }
        next.problem = problem
        let known = Set(next.listings.map(\.namespace))
        next.workspaces = next.workspaces.filter { known.contains($0.key) }
        next.readAt = ctx.clock.now()
        publish(next)
    }

    func publish(_ next: DashboardSnapshot) {
        let changed =
            next.listings != snapshot.listings || next.pods != snapshot.pods || next.problem != snapshot.problem
            || !Self.sameWorkspaces(next.workspaces, snapshot.workspaces) || !next.github.showsAs(snapshot.github)
        var next = next
        next.version = snapshot.version + (changed ? 1 : 0)
        snapshot = next
        if changed { for s in subscribers.values { s.yield(next.version) } }
    }

    static func sameWorkspaces(_ a: [String: WorkspaceView], _ b: [String: WorkspaceView]) -> Bool {
        a.count == b.count
            && a.allSatisfy { ns, w in
                guard let o = b[ns] else { return false }
                return w.tasks.map(TaskDigest.init) == o.tasks.map(TaskDigest.init) && w.state == o.state
                    && w.commits == o.commits && w.output?.id == o.output?.id && w.output?.text == o.output?.text
                    && w.problem == o.problem
            }
    }

    static let podShape = JSONShape.keys([
        "metadata": .keys([
            "name": .all, "namespace": .all, "labels": .all, "creationTimestamp": .all, "deletionTimestamp": .all,
        ]),
        "spec": .keys(["containers": .keys(["name": .all, "ports": .all]), "nodeName": .all]),
        "status": .keys(["phase": .all, "conditions": .all, "containerStatuses": .all, "podIP": .all]),
    ])
}

extension DashboardFeed {
    /// The feed of the cluster `cluster` names, as `deployment list` reaches it (never creating a kind cluster);
    /// `github`: the GitHub loop's state read too.
    public static func open(_ ctx: SoContext, cluster: ClusterOptions, github: Bool = false) async throws
        -> DashboardFeed
    {
        let target = try await ClusterTargets(ctx: ctx).shared(cluster)
        return DashboardFeed(
            ctx: ctx, client: try ctx.connect(target.connection), kubectlFlags: target.kubectlFlags,
            clusterName: target.kindCluster.map { "kind:\($0)" } ?? target.connection.contextName, github: github)
    }
}
