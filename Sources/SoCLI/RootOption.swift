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

/// `--root`, an option of `so`, on the verbs that look up a built-in stack by name.
public struct RootOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Directory holding the built-in stacks/, compose/, config/ (default: $SO_ROOT, then beside the so binary).",
            valueName: "dir"))
    public var root: String?

    public init() {}
}
