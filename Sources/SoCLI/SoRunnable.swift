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

/// A verb of `so`: what `SoCommandLine.execute` runs once the line is parsed, with the context it was given (live wiring
/// in `main`, fakes in tests).
protocol SoRunnable: ParsableCommand {
    /// The options of its group and of `so` (`GroupOption`) this verb reads; another of them given on the line is refused.
    static var takes: Set<GroupOption> { get }
    /// The options of its group and of `so` the line gave, as those commands parsed them (the verb holds them as
    /// `@ParentCommand`).
    var given: [GroupOption] { get }
    func run(_ ctx: SoContext) async throws
}
