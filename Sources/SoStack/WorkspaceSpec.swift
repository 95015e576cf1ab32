import Foundation
import SoBasics
import SoCompose

/// `workspace:` — the deployment is a workspace: a git checkout at `path` in `service`'s container, where
/// `so deployment push|fetch|diff|task` work and which `so down` checks for unpushed work.
public struct WorkspaceSpec: Sendable, Equatable {
    public var service: String
    public var path: String
    /// A shell command that runs the agent non-interactively on the task text in `$TASK` (`so deployment task`).
    public var task: String?
    /// The agent CLI (`agent: NAME`, an entry of the `agents:` table): its task, API keys and API hosts.
    public var agent: String?
    public var agentLine: Int?
    /// `idle: DURATION`: with no task, shell or exec for this long, `so cleanup --idle` stops the workspace
    /// (its volume kept) and the next verb that needs it starts it again.
    public var idleSeconds: Int?
    /// `pool: N`: `so up` keeps a warm pool of N workspaces of this stack and options (`so pool`), named after the
    /// stack: the first `up` makes it, a change of N resizes it, each claim refills it.
    public var pool: Int?
    public var line: Int?
    public init(
        service: String, path: String = "/workspace", task: String? = nil, agent: String? = nil, line: Int? = nil
    ) {
        self.service = service
        self.path = path
        self.task = task
        self.agent = agent
        self.line = line
    }
}
