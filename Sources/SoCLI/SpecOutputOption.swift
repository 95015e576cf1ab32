import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// `--output FILE`, the spec `deploy init` writes: an option of the `deploy` group, so `so deploy --output F init` parses.
struct SpecOutputOption: GroupOptionSet {
    @Option(name: .long, help: ArgumentHelp("Spec file to write (deploy init).", valueName: "file")) var output: String?

    var given: [GroupOption] { output == nil ? [] : [.specOutput] }
}
