import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentStartCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Apply the deployment to its cluster and wait until it runs.",
        discussion: """
            kind: reuses the host's kind cluster, creating it from kind-config.yml when none exists, and loads the stack's locally built images into it \
            (cluster management is on by default for both start and up; --skip-cluster-management turns it off). Objects are applied with server-side apply in \
            order (Namespace, Secrets, ConfigMaps, volumes, Services, Deployments, Jobs once, Ingress), objects that \
            left the deployment are pruned, then start \
            waits for Deployments to be available and Jobs to complete. Generated secrets are made once and kept.

            Example:
              so deployment --dir deployments/example start
              so deployment --dir deployments/example start --no-wait --progress json
              so deployment --dir deployments/prod start --kubeconfig ~/.kube/prod --context prod
            """
    )
    static let takes = StartOptions.takes
    @OptionGroup var options: StartOptions
    var given: [GroupOption] { options.target.given }
    func run(_ ctx: SoContext) async throws { try await options.run(ctx) }
}
