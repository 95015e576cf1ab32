import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoWorkspace

struct DeploymentTasksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tasks",
        abstract: "A workspace's tasks: list them, show one's report, follow its log, wait for it, cancel it.",
        discussion: """
            Tasks given with 'so deployment task --detach TEXT' run in the workspace's container one at a time, in order, whatever \
            becomes of the so that gave them. Each keeps a report there (state, times, exit code, step, progress, files, commits, \
            pushed branch, cost) that any so reads back.

            Example:
              so deployment --name fix-login task --detach "make the login test pass"
              so deployment --name fix-login tasks
              so deployment --name fix-login tasks show 1
              so deployment --name fix-login tasks logs 1 -f
              so deployment --name fix-login tasks wait 1
              so deployment --name fix-login tasks cancel 2
            """,
        subcommands: [
            DeploymentTasksListCommand.self, DeploymentTasksShowCommand.self, DeploymentTasksLogsCommand.self,
            DeploymentTasksWaitCommand.self, DeploymentTasksCancelCommand.self,
        ],
        defaultSubcommand: DeploymentTasksListCommand.self
    )
}
