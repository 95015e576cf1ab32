import ArgumentParser
import Foundation
import Logging
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoKube
import SoKubeHTTP
import SoStack
import SoSystem
import SoWorkspace

/// `--quiet`, `--verbose` (and the hidden `--debug`): options of `so` every verb reads, through the context it runs with.
public struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Print less.") public var quiet = false
    @Flag(name: .long, help: "Print more.") public var verbose = false
    @Flag(name: .long, help: .hidden) public var debug = false

    public init() {}

    /// `ctx` (the context the command line runs with) with these options applied, and `--root` when the verb takes it.
    func context(_ ctx: SoContext, root: RootOption? = nil, dryRun: Bool = false) -> SoContext {
        var ctx = ctx
        ctx.options = GlobalSettings(quiet: quiet, verbose: verbose, dryRun: dryRun, debug: debug)
        if let root = root?.root {
            ctx.builtInRoot = ctx.absolute(root)
            ctx.builtInSearched = ["\(ctx.absolute(root)) (--root)"]
        }
        return ctx
    }
}
