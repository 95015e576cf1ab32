import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentRestartCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "restart",
        abstract: "Refresh the deployment from its stack and spec, re-apply, and restart its pods.",
        discussion: """
            As laconic-so's restart: the deployment directory is updated from its own spec.yml and the stack source (deployment.yml and data/ kept, .bak of \
            changed files), applied, and its pods rolled. --pull first pulls the stack source when it is in a git repository (a source that is not is used as \
            it is). --no-sync only rolls the pods.

            Example:
              so deployment --dir deployments/example restart
              so deployment --dir deployments/example restart --pull
              so deployment --dir deployments/example restart --no-sync
            """
    )
    static let takes = DeploymentTarget.takes.union([.timeout])
    @OptionGroup var rootOption: RootOption
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "git pull the stack source first.") var pull = false
    @Flag(name: .long, help: "Only roll the pods; do not refresh or re-apply.") var noSync = false
    @Flag(name: .long, help: "Return without waiting.") var noWait = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 300 }

    func run(_ ctx: SoContext) async throws {
        let ctx = target.context(ctx, root: rootOption)
        if noSync {
            try await ObserveAction(ctx).restart(
                target.dir(ctx), cluster: target.options(), wait: !noWait, timeout: timeout)
        } else {
            try await ResyncAction(ctx).run(
                directory: target.dir(ctx), cluster: target.options(), pull: pull, wait: !noWait, timeout: timeout)
        }
    }
}
