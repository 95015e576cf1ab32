import ArgumentParser
import Foundation

struct GitHubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "github",
        abstract:
            "GitHub's webhook deliveries kept in the cluster (the inbox so dashboard writes) and the loop over them.",
        discussion: """
            'so dashboard --github-repo OWNER/NAME' keeps each signed delivery as a Secret in the namespace so-github, \
            pending until a loop takes it. 'github inbox' lists them, oldest first.

            Example:
              so github inbox
              so github inbox -o json
            """,
        subcommands: [GitHubInboxCommand.self],
        defaultSubcommand: GitHubInboxCommand.self
    )
}
