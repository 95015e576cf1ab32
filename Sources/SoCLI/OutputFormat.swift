import ArgumentParser
import Foundation
import SoActions
import SoAuthoring
import SoBasics
import SoDeploy
import SoWorkspace

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

extension OutputFormat {
    /// How a verb prints the result of its action: under json the action runs quiet (standard output holds the JSON
    /// alone) and the result is written as JSON; under text, `text` gives the lines to print.
    func report<R: Encodable>(_ ctx: SoContext, _ action: (SoContext) async throws -> R, text: (R) -> [String])
        async throws
    {
        var ctx = ctx
        if self == .json { ctx.options.quiet = true }
        let result = try await action(ctx)
        for line in self == .json ? [JSONOut.encode(result)] : text(result) { ctx.console.out(line) }
    }
}
