import Foundation
import SoBasics

public struct LogOptions: Sendable {
    public var container: String?
    public var follow = false
    public var tailLines: Int?
    public var sinceSeconds: Int?
    public var timestamps = false
    /// The log of the container's last run that ended (a container in CrashLoopBackOff: the run that crashed, not
    /// the one the kubelet may have started since).
    public var previous = false
    public init(
        container: String? = nil, follow: Bool = false, tailLines: Int? = nil, sinceSeconds: Int? = nil,
        timestamps: Bool = false
    ) {
        self.timestamps = timestamps
        self.container = container
        self.follow = follow
        self.tailLines = tailLines
        self.sinceSeconds = sinceSeconds
    }
}
