import Foundation
import SoActions
import SoBasics

/// No forge (`TaskForge`): tasks run; one that asks for an issue comment or a pull request is refused.
public struct NoTaskForge: TaskForge {
    public init() {}
    public var serves: Bool { false }

    static let refusal = SoError(
        "--pr and --issue need a forge, and this so was given none",
        hint: "give the task from the so command line, which comments and opens pull requests on GitHub")

    public func check(_ ctx: SoContext) throws { throw Self.refusal }

    public func comment(on issue: String, _ body: String, _ ctx: SoContext) async {
        ctx.diagnostics.warn("no comment on \(issue): \(Self.refusal.message)", hint: Self.refusal.hint)
    }

    public func openPullRequest(
        origin: String, head: String, base: String, title: String, body: String, _ ctx: SoContext
    ) async throws -> String { throw Self.refusal }
}
