import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

struct DeploymentStopCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Delete the deployment's objects; keep volumes, secrets and namespace unless asked.",
        discussion: """
            Returns when the objects are gone. --delete-volumes also removes claims, volumes and the generated secrets; --delete-namespace removes the \
            namespace; --perform-cluster-management deletes the kind cluster.

            A workspace (agent-workspace) is read before its volume goes: while its checkout holds commits neither pushed nor fetched, or uncommitted changes, \
            --delete-volumes refuses, naming them, unless --discard (as 'so down').

            Example:
              so deployment --dir deployments/example stop
              so deployment --dir deployments/example stop --delete-volumes --delete-namespace
            """,
        aliases: ["down"]
    )
    static let takes = DeploymentTarget.takes.union([.timeout, .dryRun])
    @OptionGroup var target: DeploymentTarget
    var given: [GroupOption] { target.given }
    @Flag(name: .long, help: "Also delete volumes (PVCs, PVs) and generated secrets.") var deleteVolumes = false
    @Flag(name: .long, help: "Keep volumes (default).") var preserveVolumes = false
    @Flag(name: .long, help: "Also delete the namespace.") var deleteNamespace = false
    @Flag(name: .long, help: "Also delete the kind cluster.") var performClusterManagement = false
    @Flag(name: .long, help: "Leave the kind cluster alone (default).") var skipClusterManagement = false
    @OptionGroup var seconds: TimeoutOption
    var timeout: Double { seconds.timeout ?? 120 }
    /// --dry-run: Change nothing; list what would be deleted.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(
        name: .long,
        help: "With --delete-volumes: delete a workspace's volume even when it holds work that is not pushed.")
    var discard = false

    func validate() throws {
        if discard && !deleteVolumes {
            throw ValidationError("--discard goes with --delete-volumes (only the volume holds a workspace's work)")
        }
        if deleteVolumes && preserveVolumes {
            throw ValidationError("--delete-volumes and --preserve-volumes contradict each other")
        }
        if performClusterManagement && skipClusterManagement {
            throw ValidationError("--perform-cluster-management and --skip-cluster-management contradict each other")
        }
    }

    func run(_ ctx: SoContext) async throws {
        let (context, dir) = (target.context(ctx), try await target.dir(ctx))
        let cluster = target.options(manage: performClusterManagement && !skipClusterManagement)
        try await StopAction(context).run(
            StopRequest(
                directory: dir, cluster: cluster, deleteVolumes: deleteVolumes, deleteNamespace: deleteNamespace,
                timeout: timeout, dryRun: dryRun, discard: discard,
                volumeGuard: WorkGuard.stop(context, directory: dir, cluster: cluster)))
    }
}
