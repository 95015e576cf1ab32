import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoKube
import SoRender
import SoStack

public struct UpResult: Sendable {
    public var name: String
    public var namespace: String
    public var directory: String
    public var created: Bool
    public var ready: Bool
    /// The deployment is a workspace (spec `workspace:`): task, diff, push and fetch apply.
    public var workspace = false
    /// With `dryRun`: what start would do, as the API server judged it.
    public var plan: [PlannedChange] = []
    /// The local checkout the workspace started from (`so up` in a checkout, or `--from DIR`).
    public var source: WorkspaceSource?
    /// Why a workspace starts empty (no GIT_REPO and no checkout here), said once.
    public var note: String?
}
