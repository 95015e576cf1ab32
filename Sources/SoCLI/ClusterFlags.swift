import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

/// How the verbs reach the cluster (options of the `deployment` group; `up`, `down` and `cleanup` take them too).
struct ClusterFlags: GroupOptionSet {
    @Option(
        name: .long, help: ArgumentHelp("Kubeconfig to use instead of the deployment's cluster.", valueName: "file"))
    var kubeconfig: String?
    @Option(name: .long, help: ArgumentHelp("Kubeconfig context to use.", valueName: "name")) var context: String?

    var given: [GroupOption] { (kubeconfig == nil ? [] : [.kubeconfig]) + (context == nil ? [] : [.context]) }

    func options(manage: Bool) -> ClusterOptions {
        ClusterOptions(kubeconfig: kubeconfig, context: context, performClusterManagement: manage)
    }
}
