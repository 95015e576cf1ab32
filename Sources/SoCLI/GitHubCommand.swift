import ArgumentParser
import Foundation
import SoGitHub

struct GitHubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "github",
        abstract:
            "GitHub's webhook deliveries kept in the cluster (the inbox so dashboard writes) and the loop over them.",
        discussion: """
            'so dashboard --github-repo OWNER/NAME' keeps each signed delivery as a Secret in the namespace so-github, \
            pending until a loop takes it. 'github inbox' lists them, oldest first; 'github loop --config F' turns them \
            into workspaces and tasks.

            Example:
              so github inbox
              so github inbox -o json
              so github loop --config loop.yml --once
            """,
        subcommands: [GitHubInboxCommand.self, GitHubLoopCommand.self],
        defaultSubcommand: GitHubInboxCommand.self
    )
}
