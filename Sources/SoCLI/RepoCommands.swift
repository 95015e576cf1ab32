import Foundation
import ArgumentParser
import SoActions
import SoBasics

// Placeholder: replaced by the real fetch-stack / setup-repositories commands.
struct FetchStackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fetch-stack", abstract: "Clone a repository holding a stack.")
    func run() async throws { throw SoError("fetch-stack is not implemented yet") }
}

struct SetupRepositoriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "setup-repositories", abstract: "Clone the repositories a stack names.")
    func run() async throws { throw SoError("setup-repositories is not implemented yet") }
}
