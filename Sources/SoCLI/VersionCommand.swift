import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct VersionCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version of so.",
        discussion: """
            Example:
              so version
            """
    )
    static let takes: Set<GroupOption> = []
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws { ctx.console.out("so \(SoVersion.current)") }
}
