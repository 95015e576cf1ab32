import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoRender
import SoWorkspace

/// What every cluster verb takes: global options, the deployment directory, how to reach the cluster.
struct DeploymentTarget: ParsableArguments {
    /// The group options a verb holding this takes, besides those it declares itself (-o, --timeout, --dry-run).
    static let takes: Set<GroupOption> = [.dir, .name, .kubeconfig, .context]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var deployment: DeploymentOptions
    @OptionGroup var cluster: ClusterFlags
    /// The group and `so`, which parsed their options: what the line gave (`given`).
    @ParentCommand var group: DeploymentCommand
    @ParentCommand var so: SoCommand
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Act on a teammate's revision of the cluster's record that the record's gate refuses for its privilege "
                + "or what it reads or runs on this machine (each named), after reading it (history, diff)."))
    var acceptPrivilege = false

    func validate() throws { try deployment.requireOne() }

    var given: [GroupOption] { group.given + so.given }
    /// The deployment's directory. `--name N` with no `$SO_HOME/deployments/N` on this machine: made from the
    /// cluster's latest record of N (said on stderr), so any machine with the kubeconfig runs every verb.
    func dir(_ ctx: SoContext) async throws -> String {
        var ctx = ctx
        ctx.options.acceptPrivilege = ctx.options.acceptPrivilege || acceptPrivilege
        if let name = deployment.name, deployment.dir == nil, !ctx.fs.isDirectory(try ctx.namedDeployment(name)) {
            // The record is whoever may write Secrets in the namespace's: its gate refuses what it would read or run
            // on this machine, and then writes nothing.
            return try await RecordAction(ctx).materialize(name: name, cluster: options(manage: false))
        }
        return try deployment.directory(ctx)
    }
    /// The deployment's directory when this machine has it (`--dir`, or `--name N` whose directory exists), else nil
    /// (nothing is made).
    func existing(_ ctx: SoContext) throws -> String? {
        if let dir = deployment.dir { return dir }
        guard let name = deployment.name else { return nil }
        let named = try ctx.namedDeployment(name)
        return ctx.fs.isDirectory(named) ? named : nil
    }
    /// How the line named the deployment, for hints: `--name N` or `--dir D`.
    var address: String { deployment.name.map { "--name \($0)" } ?? "--dir \(deployment.dir ?? "DIR")" }
    func context(_ ctx: SoContext, root: RootOption? = nil) -> SoContext {
        var acting = global.context(ctx, root: root)
        acting.options.acceptPrivilege = acceptPrivilege
        return acting
    }
    func options(manage: Bool = false) -> ClusterOptions { cluster.options(manage: manage) }
}
