import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct StackNewCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a stack (laconic layout) from plain compose files.",
        discussion: """
            Writes DIR/stacks/NAME/stack.yml, DIR/compose/docker-compose-NAME.yml (the files merged as docker compose -f merges them) and copies what the \
            compose file mounts, its env files, configs and build contexts under DIR/config/NAME/, rewriting the paths. Secret files are not copied. DIR \
            defaults to ./NAME.

            Example:
              so stack new shop --from compose.yaml
              so stack new shop --from compose.yaml --from compose.prod.yaml --output ~/stacks/shop
            """
    )
    static let takes: Set<GroupOption> = []
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Name of the new stack.") var name: String
    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp("Compose file (repeatable; merged in order).", valueName: "file")) var from: [String] = []
    @Option(name: .long, help: ArgumentHelp("Directory to write (default: ./NAME).", valueName: "dir")) var output:
        String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func run(_ ctx: SoContext) async throws {
        try await StackNewAction(global.context(ctx)).run(StackNewRequest(name: name, from: from, output: output))
    }
}
