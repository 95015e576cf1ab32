import Foundation
import SoBasics

/// `users[].user.exec`: a client-go credential plugin (apiVersion `client.authentication.k8s.io/v1` or
/// `v1beta1`), run as client-go runs it.
public struct ExecPlugin: Sendable, Hashable {
    public enum InteractiveMode: String, Sendable, Hashable {
        case never = "Never"
        case ifAvailable = "IfAvailable"
        case always = "Always"
    }
    public struct EnvVar: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var apiVersion: String
    /// A path (absolute once read from a file) or a name looked up on PATH.
    public var command: String
    public var args: [String]
    public var env: [EnvVar]
    public var installHint: String?
    public var provideClusterInfo: Bool
    public var interactiveMode: InteractiveMode
    /// The cluster's `client.authentication.k8s.io/exec` extension as compact JSON (`spec.cluster.config`).
    public var clusterConfig: String?

    public init(
        apiVersion: String = "client.authentication.k8s.io/v1", command: String, args: [String] = [],
        env: [EnvVar] = [],
        installHint: String? = nil, provideClusterInfo: Bool = false, interactiveMode: InteractiveMode = .never,
        clusterConfig: String? = nil
    ) {
        self.apiVersion = apiVersion
        self.command = command
        self.args = args
        self.env = env
        self.installHint = installHint
        self.provideClusterInfo = provideClusterInfo
        self.interactiveMode = interactiveMode
        self.clusterConfig = clusterConfig
    }

    /// The program's name for messages (`aws`, `gke-gcloud-auth-plugin`).
    public var programName: String { Path.basename(command) }
}
