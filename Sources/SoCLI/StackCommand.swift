import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

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
