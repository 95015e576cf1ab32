import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentExecCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command in a service's container; exits with the command's exit code.",
        discussion: """
            Runs through the API server (as kubectl exec does, without kubectl); -i and -t use kubectl, as does
            a cluster behind a proxy (SO_EXEC=kubectl: always). On an agent workspace the service may be left out:
            the workspace's own is meant (`so deployment --name fix-login exec -- git status`).

            Example:
              so deployment --dir deployments/example exec web -- nginx -t
              so deployment --dir deployments/example exec -it web -- sh
            """
    )
    static let takes = DeploymentTarget.takes
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .customShort("i"), help: "Pass stdin.") var interactive = false
    @Flag(name: .customShort("t"), help: "Allocate a terminal.") var tty = false
    @Argument(help: "Service (container) name; on a workspace, optional (the workspace's service).")
    var service: String
    // Options of so (--kubeconfig, --name …) may stand anywhere before --; everything after it is the command's.
    @Argument(
        help: ArgumentHelp(
            "Command and arguments; write them after -- when they hold options (-x).", valueName: "command"))
    var command: [String] = []

    func run(_ ctx: SoContext) async throws {
        let cmd = command
        let code = try await ObserveAction(target.context(ctx)).exec(
            target.dir(ctx), cluster: target.options(manage: false), service: service,
            command: cmd, interactive: interactive, tty: tty)
        if code != 0 { throw ExitCode(code) }
    }
}
