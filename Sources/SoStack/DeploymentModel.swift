import Foundation
import SoBasics
import SoCompose

/// Everything rendering needs, read from a deployment directory: pure values, no paths to read later.
public struct DeploymentModel: Sendable {
    /// Absolute deployment directory (what the namespace annotation and relative volume paths use).
    public var directory: String
    public var identity: DeploymentFile
    /// Stack directory basename: names labels (`app.kubernetes.io/stack`).
    public var stackName: String
    public var spec: Spec
    /// config.env entries, in order.
    public var config: [(key: String, value: String)]
    /// Keys held by the deployment's Secret: `$generate` tokens in the spec's config, then `secret-env` names,
    /// then the keys of the spec's credentials files.
    public var secretKeys: [String]
    /// The keys of `$generate` values (`Spec.generatedKeys`): made once, kept, rotated on request.
    public var generatedKeys: [String] { spec.generatedKeys }
    /// The spec's credentials files (absolute path, key names), as config.env names them; start reads the values.
    public var credentialsFiles: [CredentialsFile] = []
    public var pods: [ComposeComponent]
    /// Each compose service in a Deployment of its own (stack.yml `pod-per-service`, plain compose files).
    public var podPerService = false
    /// Services left out because none of their compose profiles is selected (file, service).
    public var skippedServices: [(String, ComposeService)] = []
    public var jobs: [ComposeComponent]
    /// Contents of the files compose binds and spec configmaps refer to, by path relative to `directory`.
    public var files: [String: Data]
    /// PEM contents of the spec's ca-certificates, in order.
    public var caCertificates: [Data]
    /// What each spec volume's host path is on the host, by volume name (read at load, so render can give
    /// a file or a socket the hostPath type the kubelet accepts for it). Absent: no path in the spec.
    public var hostPathKinds: [String: HostPathKind] = [:]
    /// Relative binds whose source did not exist when the deployment was created, by their path relative to
    /// the deployment directory (`compose/foundry/workspace`) → the volume whose directory `data/<volume>`
    /// `deploy create` made for them (see BindDirectory).
    public var bindDirectories: [String: String] = [:]
    /// Absolute binds under the stack's repositories (see RepoBind), by the source as the compose file writes it.
    public var repoBinds: [String: RepoBind] = [:]

    public var deployTo: DeployTarget { spec.deployTo }
    public var id: String { identity.deploymentID }
}
