import Foundation
import SoBasics

/// One agent CLI a workspace can run (`agents:` in stack.yml or spec.yml): the headless command `so
/// deployment task` runs (the task text in `$TASK`), the API key variables copied from the host into the
/// workspace's Secret, and the API hosts added to the `egress:` list.
public struct AgentProfile: Sendable, Equatable {
    public var name: String
    public var task: String
    public var secretEnv: [String]
    public var egress: [String]
    public var location: SourceLocation?

    public init(
        name: String, task: String, secretEnv: [String] = [], egress: [String] = [], location: SourceLocation? = nil
    ) {
        self.name = name
        self.task = task
        self.secretEnv = secretEnv
        self.egress = egress
        self.location = location
    }
}
