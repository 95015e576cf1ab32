import Foundation
import SoDeploy
import SoKube
import SoWorkspace

/// What the dashboard knows of the cluster at one moment: every `so` deployment (as `deployment list` reads
/// them), their pods, and each workspace's tasks and checkout as last read. Pages are drawn from it alone, so
/// a page costs no request; the feed makes a new one when the cluster changes.
public struct DashboardSnapshot: Sendable {
    /// Counts up with every change a page should show.
    public var version = 0
    public var listings: [DeploymentListing] = []
    /// The pods of each namespace (only what the pages show).
    public var pods: [String: [PodSummary]] = [:]
    /// Each workspace's tasks, by namespace, as last read.
    public var workspaces: [String: WorkspaceView] = [:]
    public var readAt: Date?
    /// Why the last read of the cluster failed (shown on every page until one succeeds).
    public var problem: String?
    /// The GitHub loop's threads, inbox and deliveries (read only when the dashboard is part of the loop).
    public var github = GitHubView()

    public init() {}

    public func listing(_ namespace: String) -> DeploymentListing? { listings.first { $0.namespace == namespace } }

    /// Every task of every workspace, newest first, with its workspace's namespace.
    public var allTasks: [(namespace: String, task: TaskRecord)] {
        workspaces.flatMap { ns, w in w.tasks.map { (ns, $0) } }
            .sorted {
                ($0.task.queuedAt ?? .distantPast, $0.namespace) > ($1.task.queuedAt ?? .distantPast, $1.namespace)
            }
    }
}
