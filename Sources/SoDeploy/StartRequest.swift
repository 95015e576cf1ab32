import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct StartRequest: Sendable {
    public var directory: String
    public var cluster: ClusterOptions
    public var wait: Bool
    public var timeout: Double
    public var progress: ProgressMode
    /// Apply only these kinds, and prune nothing (`update-envs` applies Deployments alone).
    public var onlyKinds: Set<String>?
    /// Overrides the spec's `ttl:` (seconds from this start until `cleanup --expired` may remove it).
    public var ttl: Double?
    /// `--dry-run`: the same steps with their writes in dry-run mode (helm's `install --dry-run`): nothing is
    /// created, locked, loaded, generated, run or waited for; the report's plan says what start would do.
    public var dryRun = false
    /// With `dryRun`: the fields each configured object would change.
    public var diff = false
    /// A warm pool's member (`so pool`): the spec's `secret-env` values are not copied from this environment;
    /// the claim hands in the claimer's.
    public var withholdSecretEnv = false
    /// The verb the deployment's record names as its writer (start, up, restart, rollback …).
    public var verb = "start"
    /// `--force`: a directory out of step with the cluster's record is written as its next revision.
    public var force = false
    /// `--copy-secret-env`: in a directory written from the cluster's record, the variables it names are copied
    /// from this environment too (else only those this machine copied before: `RecordTrust.notCopied`).
    public var copySecretEnv = false
    /// `--history N`: revisions of the record the cluster keeps (else the spec's `record-history:`, else 10).
    public var history: Int?
    /// A container the caller proves ready by itself while the start waits (`ReadyConfirmation`): `so up`'s exec
    /// into a workspace, which sees its clone done and its probe pass before the kubelet reports it (the wait
    /// nudges a kubelet that is late, and still waits for what it reports).
    public var confirmation: ReadyConfirmation?

    public init(
        directory: String, cluster: ClusterOptions = ClusterOptions(), wait: Bool = true, timeout: Double = 300,
        progress: ProgressMode = .auto,
        onlyKinds: Set<String>? = nil, ttl: Double? = nil, dryRun: Bool = false, diff: Bool = false
    ) {
        self.dryRun = dryRun
        self.diff = diff
        self.onlyKinds = onlyKinds
        self.ttl = ttl
        self.directory = directory
        self.cluster = cluster
        self.wait = wait
        self.timeout = timeout
        self.progress = progress
    }
}
