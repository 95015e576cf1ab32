import Foundation
import SoBasics
import SoKube
import SoStack

/// Options every command accepts (laconic-so's global options).
public struct GlobalSettings: Sendable {
    public var quiet = false
    public var verbose = false
    public var dryRun = false
    public var debug = false
    /// `--accept-privilege`: what the record's gate names in a teammate's revision (`RecordGate`) is accepted, after
    /// the user read it.
    public var acceptPrivilege = false
    public init(quiet: Bool = false, verbose: Bool = false, dryRun: Bool = false, debug: Bool = false) {
        self.quiet = quiet
        self.verbose = verbose
        self.dryRun = dryRun
        self.debug = debug
    }
}
