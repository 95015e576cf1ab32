import Foundation
import SoActions
import SoBasics
import SoCompose
import SoRender
import SoStack

/// `so deploy init`: writes a spec skeleton for a stack (reference §3.4).
public struct InitRequest: Sendable {
    /// What `--stack` names: a built-in stack, a stack path, or compose files (`a.yml,b.yml`, as typed).
    public var stack: String
    /// The stack `stack` names, when the caller resolved it already (`up`: resolved once per command).
    public var resolved: ResolvedStack?
    /// Compose files as the stack (`-f a -f b`), merged in order; used instead of `stack` when given.
    public var composeFiles: [String] = []
    public var deployTo: String
    public var config: [String]
    public var configFile: String?
    public var kubeConfig: String?
    public var imageRegistry: String?
    public var mapPortsToHost: String?
    public var output: String
    public var force: Bool
    /// Optional pods to include (`--with postgres,redis`); nil asks on a terminal when the stack has any.
    public var with: [String]?
    /// Compose profiles to deploy (`--profile`, repeatable).
    public var profiles: [String] = []
    /// Print the spec instead of writing it.
    public var dryRun = false
    /// The kind node image (`kind-node-image:`); k8s-kind only.
    public var kindNodeImage: String?

    public init(
        stack: String, deployTo: String = "k8s-kind", config: [String] = [], configFile: String? = nil,
        kubeConfig: String? = nil,
        imageRegistry: String? = nil, mapPortsToHost: String? = nil, output: String, force: Bool = false
    ) {
        self.stack = stack
        self.deployTo = deployTo
        self.config = config
        self.configFile = configFile
        self.kubeConfig = kubeConfig
        self.imageRegistry = imageRegistry
        self.mapPortsToHost = mapPortsToHost
        self.output = output
        self.force = force
    }

    public init(stack: String, config: [String] = [], output: String, force: Bool = false, with: [String]?) {
        self.init(stack: stack, config: config, output: output, force: force)
        self.with = with
    }
}
