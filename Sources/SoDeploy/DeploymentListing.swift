import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

/// One `so` deployment found on the cluster (its namespace carries the facts).
public struct DeploymentListing: Sendable, Equatable {
    public var name: String
    public var stack: String
    public var namespace: String
    public var id: String
    public var directory: String
    public var host: String
    public var createdAt: Date?
    public var expiresAt: Date?
    public var readyDeployments: Int
    public var deployments: Int
    public var terminating: Bool
    /// Whether `so` made its namespace (`NamespaceContents`): only then is it removed whole without a look inside.
    public var madeBySo = false
    /// A workspace with `idle:`: the seconds, its checkout ("CONTAINER PATH"), when it last started and was
    /// last used, and when `so cleanup --idle` stopped it (nil: it was not, or has started since).
    public var idleAfter: Int?
    public var workspaceAt: String?
    public var startedAt: Date?
    public var lastUsedAt: Date?
    public var idleStoppedAt: Date?
    /// A warm pool's member not claimed yet: its pool.
    public var pool: String?
    /// A workspace claimed from a warm pool: the pool.
    public var claimedFrom: String?
    /// The record's latest revision, who wrote it and when (nil: none yet, an older `so` started it).
    public var recordRevision: Int?
    public var writtenBy: String?
    public var writtenAt: Date?

    /// Stopped for being idle, and not started since.
    public var idleStopped: Bool { idleStoppedAt != nil && deployments == 0 }

    public var ready: Bool { deployments > 0 && readyDeployments == deployments }
    public func expired(at now: Date) -> Bool { expiresAt.map { $0 <= now } ?? false }
}
