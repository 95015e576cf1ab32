import ArgumentParser
import Foundation
import Logging
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoKubeHTTP
import SoStack
import SoSystem
import SoWorkspace

/// `--dry-run`, on the commands where it means something: they then change nothing and say what they would do.
/// One option group type for all of them, declared on the root too, so `so --dry-run VERB` reaches the verb.
public struct DryRunFlag: ParsableArguments {
    @Flag(name: .long, help: "Change nothing; print what would be done.") public var dryRun = false
    public init() {}
}
