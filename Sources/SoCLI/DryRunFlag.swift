import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics
import SoKube
import SoKubeHTTP
import Logging
import SoStack
import SoSystem

/// `--dry-run`, on the commands where it means something: they then change nothing and say what they would do.
/// One option group type for all of them, declared on the root too, so `so --dry-run VERB` reaches the verb.
public struct DryRunFlag: ParsableArguments {
    @Flag(name: .long, help: "Change nothing; print what would be done.") public var dryRun = false
    public init() {}
}
