import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

struct DownCommand: SoRunnable {
    static let configuration = CommandConfiguration(
        commandName: "down",
        abstract: "Remove a deployment 'so up' made: objects, volumes, namespace and directory.",
        discussion: """
            Safe to repeat: a deployment already gone exits 0. When its directory is gone, the namespace is found on the cluster by name.

            A workspace (agent-workspace) is read first: commits neither pushed nor fetched and uncommitted changes would be lost with its volume. --keep \
            leaves its branch (agent/NAME, with what it left uncommitted committed) in the local repository, --merge merges that branch into the current \
            branch, --discard throws the work away. Without one of them down asks on a terminal, and refuses, naming \
            the work, without one. A workspace that is \
            not running cannot be read and is refused the same way (--discard removes it).

            Example:
              so down fix-login
              so down fix-login --keep
              so down fix-login --merge --into ~/src/web
              so down fix-login --discard
            """
    )
    static let takes: Set<GroupOption> = [.dryRun]
    @OptionGroup var global: GlobalOptions
    @OptionGroup var cluster: ClusterFlags
    @Argument(help: "Name given to 'so up'.") var name: String
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait for objects to go.", valueName: "seconds"),
        transform: Seconds.parse) var timeout: Double = 120
    @Flag(
        name: [.long, .customLong("force")],
        help: "Remove a workspace even when it holds work that is not pushed (alias --force).") var discard = false
    /// --dry-run: Change nothing; list what would be removed.
    @OptionGroup var dry: DryRunFlag
    var dryRun: Bool { dry.dryRun }
    @Flag(name: .long, help: "A workspace: leave its branch in the local repository first.") var keep = false
    @Flag(name: .long, help: "A workspace: merge its branch into the local repository's current branch first.")
    var merge = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The local repository for --keep and --merge (default: the one the current directory is in).",
            valueName: "dir")) var into: String?
    @ParentCommand var so: SoCommand
    var given: [GroupOption] { so.given }

    func validate() throws {
        if [discard, keep, merge].filter({ $0 }).count > 1 {
            throw ValidationError("--keep, --merge and --discard contradict each other: give one")
        }
        if into != nil && !(keep || merge) {
            throw ValidationError("--into names the repository for --keep or --merge")
        }
    }

    func run(_ ctx: SoContext) async throws {
        var req = DownRequest(name: name)
        req.dryRun = dryRun
        req.discard = discard
        req.choice = keep ? .keep : merge ? .merge : discard ? .discard : nil
        req.into = into
        req.timeout = timeout
        req.cluster = cluster.options(manage: false)
        try await DownAction(global.context(ctx)).run(req)
    }
}
