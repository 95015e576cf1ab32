import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct StackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "List and inspect stacks.",
        discussion: """
            Example:
              so stack list
              so stack show example
            """,
        subcommands: [StackListCommand.self, StackShowCommand.self, StackNewCommand.self]
    )
}
