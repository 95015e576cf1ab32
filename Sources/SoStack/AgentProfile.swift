import Foundation
import SoBasics

/// One agent CLI a workspace can run (`agents:` in stack.yml or spec.yml): the headless command `so
/// deployment task` runs (the task text in `$TASK`), the API key variables copied from the host into the
/// workspace's Secret, the API hosts added to the `egress:` list, and the image with the CLI (`image:`, built by
/// `so build-containers --agent NAME`), which `so up` runs when the cluster has it.
public struct AgentProfile: Sendable, Equatable {
    public var name: String
    public var task: String
    public var secretEnv: [String]
    public var egress: [String]
    public var image: String?
    public var location: SourceLocation?

    public init(
        name: String, task: String, secretEnv: [String] = [], egress: [String] = [], image: String? = nil,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.task = task
        self.secretEnv = secretEnv
        self.egress = egress
        self.image = image
        self.location = location
    }
}
