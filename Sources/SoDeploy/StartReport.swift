import Foundation
import SoActions
import SoBasics
import SoKube
import SoRender
import SoStack

public struct StartReport: Sendable {
    public var namespace: String
    public var applied: [String] = []
    public var skipped: [String] = []
    public var pruned: [String] = []
    public var generatedSecrets: [String] = []
    /// Objects already as rendered (not sent again).
    public var unchanged: [String] = []
    /// A dry run's plan: what start would do to each object, in the manifest's order, then what it would prune.
    public var plan: [PlannedChange] = []
}
