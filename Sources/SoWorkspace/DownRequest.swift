import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

public struct DownRequest: Sendable {
    public var name: String
    public var timeout: Double = 120
    public var cluster = ClusterOptions(performClusterManagement: false)
    /// List what would be removed; remove nothing.
    public var dryRun = false
    /// Remove a workspace even when its checkout holds work that is not pushed or fetched.
    public var discard = false
    /// What to do with a workspace's work first: keep its branch in the local repository, merge it, or
    /// discard it. Nil: asked on a terminal when there is work; refused without one.
    public var choice: DownChoice?
    /// The local repository for keep and merge (default: the one the current directory is in).
    public var into: String?
    public init(name: String) { self.name = name }
}
