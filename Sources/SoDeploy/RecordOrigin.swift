import Foundation

/// Where a revision of a record was found: the namespace it was read from, the deployment its Secrets are
/// labelled with, and the namespace's Pod Security level (nil when unknown). A revision names its namespace and
/// deployment in its own files too, and those are whoever wrote it's: they must say the same.
public struct RecordOrigin: Sendable, Equatable {
    public var namespace: String
    public var deployment: String
    /// `pod-security.kubernetes.io/enforce` of the namespace as found: what it already admits.
    public var podSecurity: String?

    public init(namespace: String, deployment: String, podSecurity: String? = nil) {
        self.namespace = namespace
        self.deployment = deployment
        self.podSecurity = podSecurity
    }

    public static let podSecurityLabel = "pod-security.kubernetes.io/enforce"
}
