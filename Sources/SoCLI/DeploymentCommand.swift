import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deployment",
        abstract: "Run and inspect a deployment directory (--dir D).",
        discussion: """
            Example:
              so deployment --dir deployments/example start
              so deployment --dir deployments/example status
              so deployment --dir deployments/example logs --tail 20 -f
              so deployment --name ws-1 shell
              so deployment --name ws-1 task "make the login test pass" --pr
              so deployment --name ws-1 task --detach "make the login test pass"
              so deployment --name ws-1 tasks
              so deployment list
            """,
        subcommands: [
            DeploymentListCommand.self, DeploymentShellCommand.self, DeploymentStartCommand.self,
            DeploymentUpCommand.self,
            DeploymentStopCommand.self, DeploymentStatusCommand.self,
            DeploymentPsCommand.self, DeploymentLogsCommand.self, DeploymentExecCommand.self,
            DeploymentPortForwardCommand.self,
            DeploymentRestartCommand.self, DeploymentUpdateEnvsCommand.self,
            DeploymentRotateSecretsCommand.self, DeploymentRenderCommand.self,
            DeploymentTaskCommand.self, DeploymentTasksCommand.self, DeploymentDiffCommand.self,
            DeploymentPushCommand.self,
            DeploymentFetchCommand.self,
            DeploymentLogCommand.self, DeploymentApplyCommand.self, DeploymentMergeCommand.self,
            DeploymentPullCommand.self, DeploymentHistoryCommand.self, DeploymentRollbackCommand.self,
        ]
    )

    // The group's options (they parse before or after the verb: `so deployment --dir D status`, `so deployment status
    // --dir D`); a verb that takes one declares the same option group and reads this value.
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var cluster: ClusterFlags
    @OptionGroup var format: FormatOption
    @OptionGroup var seconds: TimeoutOption

    var given: [GroupOption] { deployment.given + cluster.given + format.given + seconds.given }
}

extension ProgressMode: ExpressibleByArgument {}
