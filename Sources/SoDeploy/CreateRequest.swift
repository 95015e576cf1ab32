import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// `so deploy create`: turns a spec into a deployment directory (reference §3.7), transactionally.
public struct CreateRequest: Sendable {
    public var specFile: String
    public var deploymentDir: String?
    public var update: Bool
    /// `--stack` given on the command line (optional: the spec names the stack).
    public var stack: String?
    /// The stack the spec names, when the caller resolved it already (`up`, which wrote the spec).
    public var resolved: ResolvedStack?
    /// `--ttl`: written into the deployment's spec.yml as `ttl:` (the user's spec file is not changed).
    public var ttl: String?
    /// List the files that would be written or changed; write nothing.
    public var dryRun = false
    /// `--update` of a deployment in step with the cluster's record: how the cluster is reached to record it.
    public var cluster = ClusterOptions()

    public init(specFile: String, deploymentDir: String? = nil, update: Bool = false, stack: String? = nil) {
        self.specFile = specFile
        self.deploymentDir = deploymentDir
        self.update = update
        self.stack = stack
    }
}
