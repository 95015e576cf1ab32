import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct CleanupRequest: Sendable {
    public var expired = false
    public var orphaned = false
    public var olderThan: Double?
    public var dryRun = false
    public var wait = true
    public var timeout: Double = 120
    public var cluster = ClusterOptions(performClusterManagement: false)
    public init() {}
}
