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

/// `--stack`, an option of `so`, on the verbs that read a stack by it (deploy init and create, stack show, build-containers,
/// setup-repositories).
public struct StackOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Stack: a built-in name, or a path to a stack directory.", valueName: "name|path"))
    public var stack: String?

    public init() {}

    func require(_ command: String) throws -> String {
        guard let stack else {
            throw SoError.usage(
                "\(command) needs --stack", hint: "pass --stack NAME (see 'so stack list') or --stack PATH")
        }
        return stack
    }
}
