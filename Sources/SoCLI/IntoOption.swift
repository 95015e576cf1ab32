import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// `--into DIR`: the local checkout a workspace's work comes into (fetch, apply, merge).
struct IntoOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("The local checkout (default: the repository of the current directory).", valueName: "dir"))
    var into: String?
}
