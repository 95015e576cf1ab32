import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

/// Options of the `deploy` group (laconic-so puts --deploy-to on the group).
struct DeployGroupOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where the deployment runs: k8s-kind (local kind cluster) or k8s (any cluster).", valueName: "target"))
    var deployTo: String = "k8s-kind"
}
