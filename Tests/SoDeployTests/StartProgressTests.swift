import Foundation
import SoBasics
import SoKube
import SoRender
import SoStack
import SoSystem
import SoTestSupport
import Testing

@testable import SoActions
@testable import SoDeploy

@Suite struct LiveProgressTests {
    /// On a terminal the wait redraws one status line (spinner, elapsed); in CI it prints a line per change.
    @Test(arguments: [true, false]) func waitProgress(terminal: Bool) async throws {
        let c = try await ClusterHarness(healthy: false)
        var ctx = c.ctx
        let console = CapturedConsole(isTerminal: terminal)
        ctx.console = console
        await #expect(throws: SoError.self) {
            _ = try await StartAction(ctx).run(
                StartRequest(directory: "dep", cluster: c.options, timeout: 10, progress: .auto))
        }
        let waits = console.statuses.filter { $0.contains("waiting for Deployment") }
        if terminal {
            #expect(waits.count >= 4, "\(console.statuses)")
            #expect(waits.last?.hasSuffix("(9s)") == true, "\(waits)")
            #expect(
                console.statuses.contains { $0.contains("applied 2/2: 1 Deployment, 1 Job") }, "\(console.statuses)")
            #expect(!console.stdout.contains("waiting Deployment"))
        } else {
            #expect(console.statuses.isEmpty)
            // One line for the state, not one per poll.
            #expect(console.stdout.components(separatedBy: "waiting Deployment").count - 1 == 1, "\(console.stdout)")
        }
    }
}
