import Foundation
import SoActions
import SoBasics
import SoCompose
import SoStack

public struct BuildRequest: Sendable {
    public var stack: String
    /// Only these containers or compose services (names as listed by `--dry-run`).
    public var include: [String] = []
    public var exclude: [String] = []
    public var forceRebuild = false
    /// `--agent NAME`: also the image of that entry of the stack's `agents:` (AgentImageBuild).
    public var agent: String?
    public var dryRun = false
    public init(stack: String) { self.stack = stack }
}
