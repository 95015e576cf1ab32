import Foundation
import SoWorkspace

/// A workspace's facts that only its container holds: its tasks and checkout, and a running task's output.
public struct WorkspaceView: Sendable {
    public var tasks: [TaskRecord] = []
    public var state: WorkspaceState?
    public var commits: [TaskRecord.Commit] = []
    /// The output of the task running (or last ended), its last lines, secret values replaced.
    public var output: (id: Int, text: String)?
    public var readAt: Date?
    public var problem: String?
    public init() {}

    public var active: Bool { tasks.contains { $0.state == "queued" || $0.state == "running" } }
}
