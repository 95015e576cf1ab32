import Foundation
import ArgumentParser
import SoActions
import SoDeploy
import SoWorkspace
import SoAuthoring
import SoBasics

/// Options of the `deploy` group (laconic-so puts --deploy-to on the group).
struct DeployGroupOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Where the deployment runs: k8s-kind (local kind cluster) or k8s (any cluster).", valueName: "target"))
    var deployTo: String = "k8s-kind"
}
